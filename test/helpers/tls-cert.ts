// The throwaway certificates of the TLS tests: one maker for the unit tests beside the code and these.
export { makeCertificate, opensslMissing, type TestCertificate } from '../../src/main/team-client/certificate.fixture.ts';

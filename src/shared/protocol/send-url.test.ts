import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSendUrl, isForbiddenAddress } from './send-url.ts';

/** Every spelling of a forbidden target: [what it is, the send_url, the address as a resolver or socket reports it]. */
const FORBIDDEN: Array<[string, string, string | null]> = [
  ['metadata, dotted', 'http://169.254.169.254/latest/meta-data', '169.254.169.254'],
  ['link-local, low end', 'http://169.254.0.0/', '169.254.0.0'],
  ['link-local, high end', 'http://169.254.255.255/', '169.254.255.255'],
  ['metadata, decimal', 'http://2852039166/', '2852039166'],
  ['metadata, hex', 'http://0xa9fea9fe/', '0xa9fea9fe'],
  ['metadata, hex per octet', 'http://0xa9.0xfe.0xa9.0xfe/', '0xa9.0xfe.0xa9.0xfe'],
  ['metadata, octal', 'http://0251.0376.0251.0376/', '0251.0376.0251.0376'],
  ['metadata, octal with decimal octets (0251.254 reads as octal)', 'http://0251.254.169.254/', '0251.254.169.254'],
  ['metadata, short form a.b.c', 'http://169.254.43518/', '169.254.43518'],
  ['metadata, short form a.b', 'http://169.16689662/', '169.16689662'],
  ['metadata, trailing dot', 'http://169.254.169.254./', '169.254.169.254.'],
  ['IPv4-mapped, dotted', 'http://[::ffff:169.254.169.254]/', '::ffff:169.254.169.254'],
  ['IPv4-mapped, hex', 'http://[::ffff:a9fe:a9fe]/', '::ffff:a9fe:a9fe'],
  ['IPv4-mapped, upper case', 'http://[::FFFF:A9FE:A9FE]/', '::FFFF:A9FE:A9FE'],
  ['IPv4-mapped, uncompressed', 'http://[0:0:0:0:0:ffff:a9fe:a9fe]/', '0000:0000:0000:0000:0000:ffff:a9fe:a9fe'],
  ['IPv4-compatible, hex', 'http://[::a9fe:a9fe]/', '::a9fe:a9fe'],
  ['IPv4-compatible, dotted', 'http://[::169.254.169.254]/', '::169.254.169.254'],
  ['IPv4-translated', 'http://[::ffff:0:a9fe:a9fe]/', '::ffff:0:169.254.169.254'],
  ['NAT64 well-known prefix, hex', 'http://[64:ff9b::a9fe:a9fe]/', '64:ff9b::a9fe:a9fe'],
  ['NAT64 well-known prefix, dotted', 'http://[64:ff9b::169.254.169.254]/', '64:ff9b::169.254.169.254'],
  ['NAT64 local-use prefix', 'http://[64:ff9b:1::a9fe:a9fe]/', '64:ff9b:1::a9fe:a9fe'],
  ['IPv4-mapped link-local', 'http://[::ffff:169.254.1.2]/', '::ffff:a9fe:102'],
  ['Alibaba metadata', 'http://100.100.100.200/', '100.100.100.200'],
  ['Alibaba metadata, decimal', 'http://1684301000/', '1684301000'],
  ['Alibaba metadata, IPv4-mapped', 'http://[::ffff:100.100.100.200]/', '::ffff:6464:64c8'],
  ['Oracle metadata', 'http://192.0.0.192/', '192.0.0.192'],
  ['Oracle metadata, NAT64', 'http://[64:ff9b::c000:c0]/', '64:ff9b::192.0.0.192'],
  ['IPv6 link-local', 'http://[fe80::1]/', 'fe80::1'],
  ['IPv6 link-local, zone id', 'http://[fe80::1]/', 'fe80::1%eth0'],
  ['IPv6 link-local, URL-encoded zone id', 'http://[fe80::1]/', 'fe80::1%25eth0'],
  ['IPv6 link-local, top of fe80::/10', 'http://[febf:ffff::1]/', 'febf:ffff::1'],
  ['IPv6 link-local, upper case', 'http://[FE80::ABCD]/', 'FE80::ABCD'],
  ['IPv6 link-local, uncompressed', 'http://[fe80:0:0:0:0:0:0:1]/', 'fe80:0000:0000:0000:0000:0000:0000:0001'],
  ['AWS metadata over IPv6', 'http://[fd00:ec2::254]/', 'fd00:ec2::254'],
  ['AWS metadata over IPv6, uncompressed', 'http://[fd00:0ec2:0:0:0:0:0:0254]/', 'fd00:0ec2:0000:0000:0000:0000:0000:0254'],
  ['GCP metadata name', 'http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal'],
  ['GCP metadata name, upper case and trailing dot', 'http://METADATA.GOOGLE.INTERNAL./', 'METADATA.GOOGLE.INTERNAL.'],
  ['GCP metadata name, full-width letters', 'http://ｍｅｔａｄａｔａ.google.internal/', 'ｍｅｔａｄａｔａ.google.internal'],
  ['GCP short names', 'http://metadata/', 'metadata.goog'],
  ['EC2 metadata names', 'http://instance-data/', 'instance-data.ec2.internal.'],
  ['metadata, with a port', 'https://169.254.169.254:8443/', '[::ffff:a9fe:a9fe]'],
];

/** Look-alikes that stay allowed: loopback and private ranges are legitimate receivers. */
const ALLOWED: Array<[string, string, string]> = [
  ['loopback', 'http://127.0.0.1:8080/hook', '127.0.0.1'],
  ['loopback, decimal', 'http://2130706433/', '2130706433'],
  ['IPv6 loopback', 'http://[::1]/', '::1'],
  ['IPv4-mapped loopback', 'http://[::ffff:7f00:1]/', '::ffff:127.0.0.1'],
  ['private 10/8', 'http://10.0.0.1/', '10.0.0.1'],
  ['private 192.168/16', 'http://192.168.1.10/', '192.168.1.10'],
  ['just below link-local', 'http://169.253.255.255/', '169.253.255.255'],
  ['just above link-local', 'http://169.255.0.0/', '169.255.0.0'],
  ['neighbour of Alibaba metadata', 'http://100.100.100.201/', '100.100.100.201'],
  ['neighbour of Oracle metadata', 'http://192.0.0.193/', '192.0.0.193'],
  ['just below fe80::/10', 'http://[fe7f::1]/', 'fe7f::1'],
  ['site-local fec0::/10', 'http://[fec0::1]/', 'fec0::1'],
  ['neighbour of AWS IPv6 metadata', 'http://[fd00:ec2::253]/', 'fd00:ec2::253'],
  ['link-local bits outside an embedding prefix', 'http://[1::a9fe:a9fe]/', '1::a9fe:a9fe'],
  ['NAT64 of a public address', 'http://[64:ff9b::808:808]/', '64:ff9b::8.8.8.8'],
  ['public address', 'http://8.8.8.8/', '8.8.8.8'],
  ['public IPv6', 'http://[2001:db8::1]/', '2001:db8::1'],
  ['public name', 'https://hooks.example.com/in', 'hooks.example.com'],
  ['name that contains a metadata name', 'https://metadata.google.internal.example.com/', 'metadata.google.internal.example.com'],
  ['name that starts like a metadata address', 'https://169.254.169.254.example.com/', '169.254.169.254.example.com'],
  ['localhost', 'http://localhost:3000/', 'localhost'],
];

test('link-local and cloud metadata addresses are refused in every spelling, as URL text and as a raw address', () => {
  for (const [what, url, raw] of FORBIDDEN) {
    const check = checkSendUrl(url, undefined);
    assert.deepEqual(check.ok ? 'accepted' : check.code, 'send_url_not_allowed', `${what}: ${url} (hostname ${new URL(url).hostname})`);
    if (raw !== null) assert.equal(isForbiddenAddress(raw), true, `${what}: raw ${raw}`);
    assert.equal(isForbiddenAddress(new URL(url).hostname), true, `${what}: hostname of ${url}`);
  }
});

test('loopback, private and public look-alikes stay allowed', () => {
  for (const [what, url, raw] of ALLOWED) {
    assert.ok(checkSendUrl(url, undefined).ok, `${what}: ${url}`);
    assert.equal(isForbiddenAddress(raw), false, `${what}: raw ${raw}`);
  }
});

test('a string shaped like IPv6 that does not parse is refused rather than guessed at', () => {
  for (const bad of ['fe80::1::2', '1:2:3:4:5:6:7:8:9', '::ffff:999.1.1.1', 'gggg::1', ':1::']) assert.equal(isForbiddenAddress(bad), true, bad);
});

test('send_url: absolute http(s), no credentials, allowlist by origin', () => {
  assert.ok(checkSendUrl('https://hooks.example.com/a?b=1', undefined).ok);
  assert.deepEqual(checkSendUrl('mailto:x@example.com', undefined).ok, false);
  assert.equal((checkSendUrl('https://user:pw@example.com/', undefined) as { message: string }).message, 'must not contain credentials');
  const denied = checkSendUrl('https://other.example.com/x', ['https://hooks.example.com']);
  assert.deepEqual(denied.ok ? null : denied.code, 'send_url_not_allowed');
  assert.ok(checkSendUrl('https://hooks.example.com/deep/path', ['https://hooks.example.com']).ok);
  // An allowlist never lets a forbidden address through.
  const listed = checkSendUrl('http://[::ffff:a9fe:a9fe]/', ['http://[::ffff:a9fe:a9fe]']);
  assert.deepEqual(listed.ok ? null : listed.code, 'send_url_not_allowed');
});

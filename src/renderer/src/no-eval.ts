import { z } from 'zod';

// The console's CSP refuses eval (src/shared/csp.ts). zod probes for it with `new Function('')`
// whenever an object schema is built, which the page reports as a policy violation; without eval
// zod parses the same, only without its compiled fast path. Imported first by main.tsx, before
// any schema exists.
z.config({ jitless: true });

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NODE_JCS, PYTHON_JCS } from './integrate-code.ts';
import { nodeReceiver, pythonReceiver, RECEIVER_LANGUAGES, RECEIVER_RUN, receiverFor } from './integrate-receivers.ts';

const SECRET = 'dGVzdC1zZWNyZXQtZG8tbm90LXVzZS1pbi1wcm9kdWN0aW9u';
const NASTY_ID = `o'brien "x" $HOME 客户`;

// The receivers run for real in test/console-integrate.test.ts (copied out of the page, against a
// live server); these pin what must hold for any client id and secret.
describe('integrate receivers', () => {
  it('fill in the client id, and the secret only when given; else read SWITCHBOARD_SECRET (new,old while rotating)', () => {
    for (const language of RECEIVER_LANGUAGES) {
      const withSecret = receiverFor(language, { clientId: 'acme', secret: SECRET });
      assert.ok(withSecret.includes(SECRET), `${language}: secret`);
      const without = receiverFor(language, { clientId: 'acme', secret: null });
      assert.ok(!without.includes(SECRET), `${language}: no secret`);
      assert.match(without, /SWITCHBOARD_SECRET.*split\(","\)|SWITCHBOARD_SECRET \?\? ''\)\.split\(','\)/, `${language}: a comma-separated list`);
      assert.match(without, /set SWITCHBOARD_SECRET to the client secret \(while you rotate: new,old\)/, `${language}: stops naming the variable`);
    }
    assert.ok(pythonReceiver({ clientId: NASTY_ID, secret: `se'cr"et` }).includes(`CLIENT = ${JSON.stringify(NASTY_ID)}\n`));
    assert.ok(pythonReceiver({ clientId: NASTY_ID, secret: `se'cr"et` }).includes(`SECRETS = [${JSON.stringify(`se'cr"et`)}]`));
    assert.ok(nodeReceiver({ clientId: NASTY_ID, secret: null }).includes(`const CLIENT = ${JSON.stringify(NASTY_ID)};`));
  });

  it('verify as protocol section 8 says: JCS of message_info, 300 s, and 503 (never a 4xx) to what does not verify', () => {
    const python = pythonReceiver({ clientId: 'acme', secret: null });
    assert.ok(python.includes(PYTHON_JCS.join('\n')), 'the senders\' canonical JSON');
    assert.match(python, /data = f"\{timestamp\}\.\{CLIENT\}\.\{jcs\(body\.get\('message_info'\)\)\}"/);
    assert.match(python, /abs\(time\.time\(\) - timestamp\) > 300/);
    assert.match(python, /hmac\.compare_digest/);
    assert.match(python, /if not ok:\n.*\n\s+return self\.answer\(503\)/);
    const node = nodeReceiver({ clientId: 'acme', secret: null });
    assert.ok(node.includes(NODE_JCS.join('\n')), 'the senders\' canonical JSON');
    assert.match(node, /const data = `\$\{body\.timestamp\}\.\$\{CLIENT\}\.\$\{jcs\(body\.message_info\)\}`/);
    assert.match(node, /Math\.abs\(Date\.now\(\) \/ 1000 - body\.timestamp\) > 300/);
    assert.match(node, /timingSafeEqual/);
    assert.match(node, /!verified\(body\)\) \{\n.*\n\s+return res\.writeHead\(503\)\.end\(\);/);
    for (const code of [python, node]) {
      const statuses = new Set([...code.matchAll(/(?:self\.answer|res\.writeHead)\((\d+)\)/g)].map((m) => m[1]));
      assert.deepEqual([...statuses].sort(), ['200', '503'], 'answers only 200 or 503');
      assert.match(code, /[Ii]dempotency-[Kk]ey/, 'deduplicates on Idempotency-Key');
      assert.match(code, /Answers 200 to a verified delivery and 503 to anything else/);
    }
  });

  it('listen on the port given as the argument (default 9000, 0 for a free one) and say so in the header', () => {
    assert.match(pythonReceiver({ clientId: 'acme', secret: null }), /^PORT = int\(sys\.argv\[1\]\) if len\(sys\.argv\) > 1 else 9000$/m);
    assert.match(nodeReceiver({ clientId: 'acme', secret: null }), /^const PORT = Number\(process\.argv\[2\] \?\? 9000\);$/m);
    for (const language of RECEIVER_LANGUAGES) {
      const lines = receiverFor(language, { clientId: 'acme', secret: null }).split('\n');
      assert.ok(lines[1]!.includes(RECEIVER_RUN[language].command), `${language}: how to run it`);
      assert.match(lines[2]!, /argument is the port \(default 9000; 0 picks a free one\)/);
      assert.match(lines[3]!, /npm run cli -- clients set acme --send-url URL/);
    }
  });
});

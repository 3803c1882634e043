import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// The baseline: node:http reading the whole body and answering 200, nothing else.
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.stringify({ ok: true, bytes: Buffer.concat(chunks).length });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => console.log(`endpoint: http://127.0.0.1:${(server.address() as AddressInfo).port}/custom-im/chat-messages`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));

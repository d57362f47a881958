// The receiver process of bench/webhooks.bench.ts (not a benchmark itself): an HTTPS server that verifies every
// request with the verifier package and answers 204 (400 when it does not verify), in a process of its own, as a
// real receiver is. IPC: `secret` sets the signing secret, `counts` answers the verified and rejected counts and the CPU time used.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { verify } from '../verifier/src/index.js';

const tls = (name: string) => readFileSync(new URL(`../test/fixtures/tls/${name}`, import.meta.url));
let secret = '';
let verified = 0;
let rejected = 0;
const server = createServer({ key: tls('server-key.pem'), cert: tls('server.pem') }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      verify({ payload: Buffer.concat(chunks), headers: req.headers, secret });
      verified += 1;
      res.writeHead(204).end();
    } catch {
      rejected += 1;
      res.writeHead(400).end();
    }
  });
});
server.listen(0, '127.0.0.1', () => process.send!({ type: 'ready', port: (server.address() as AddressInfo).port }));
process.on('message', (m: { type: string; secret?: string }) => {
  if (m.type === 'secret') {
    secret = m.secret ?? '';
    process.send!({ type: 'secret' });
  } else if (m.type === 'counts') {
    process.send!({ type: 'counts', verified, rejected, cpu: process.cpuUsage() });
  } else if (m.type === 'stop') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});

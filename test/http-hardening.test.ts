import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import request from 'supertest';
import { startService, type TestService } from './support.js';

const JSON_CSP = "default-src 'none';frame-ancestors 'none'";

/** The headers every response must carry, whatever the surface and status. */
function expectSecurityHeaders(res: request.Response): void {
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-powered-by']).toBeUndefined();
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['content-security-policy']).toBe(JSON_CSP);
  // The rest of what helmet sets (read once at start-up, set at every response: rest-facade/src/security-headers.ts).
  expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
  expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
  expect(res.headers['origin-agent-cluster']).toBe('?1');
  expect(res.headers['x-dns-prefetch-control']).toBe('off');
  expect(res.headers['x-download-options']).toBe('noopen');
  expect(res.headers['x-permitted-cross-domain-policies']).toBe('none');
  expect(res.headers['x-xss-protection']).toBe('0');
}

/** What a raw TCP client saw: the bytes it got back and how long the server kept the connection. */
interface RawOutcome {
  response: string;
  elapsedMs: number;
}

/**
 * Connects to `port`, writes `head` at once and then `trickle` one chunk every `everyMs` until the server closes
 * the connection (or the trickle ends, when `endAfter` is set).
 */
function rawClient(port: number, head: string, trickle: string[] = [], everyMs = 1000): Promise<RawOutcome> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const give = () => {
      if (socket.destroyed || socket.writableEnded) return;
      const next = trickle.shift();
      if (next === undefined) return;
      socket.write(next);
      timer = setTimeout(give, everyMs);
    };
    socket.on('connect', () => {
      socket.write(head);
      timer = setTimeout(give, everyMs);
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined); // a reset after the 408 is the server cutting us off
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ response: Buffer.concat(chunks).toString('latin1'), elapsedMs: Date.now() - started });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`server kept the connection for 20 s; got ${Buffer.concat(chunks).toString('latin1').slice(0, 100)}`));
    }, 20_000).unref();
  });
}

describe('HTTP hardening', () => {
  describe('security headers', () => {
    let t: TestService;
    beforeAll(async () => {
      t = await startService();
    });
    afterAll(async () => {
      await t.stop();
    });

    it('sends them on health checks, every surface, errors and unknown routes', async () => {
      const answers = [
        await t.api.get('/healthz'),
        await t.api.get('/readyz'),
        await t.api.get('/no-such-route'),
        await t.api.get('/v1/communities/not-a-uuid'),
        await t.api.get('/v1/me'),
        await t.api.post('/graphql').set('content-type', 'application/json').send({ query: '{ __typename }' }),
        await t.api.post('/graphql').set('content-type', 'application/json').send('{"query": '),
        await t.api.post('/auth/login').set('content-type', 'application/json').send({ email: 'nobody@example.com', password: 'x' }),
        await t.api.get('/openapi.json'),
      ];
      expect(answers.map((r) => r.status)).toEqual([200, 200, 404, 401, 401, 200, 400, 401, 200]);
      answers.forEach(expectSecurityHeaders);
    });

    it('marks every API answer no-store, signed in or not, and lets caches keep the public contract', async () => {
      const signedIn = await t.api.get('/auth/me').set('cookie', 'svc_session=whatever');
      const bearer = await t.api.get('/v1/me').set('authorization', 'Bearer svc_sk_nothing');
      const graphql = await t.api.post('/graphql').set('content-type', 'application/json').send({ query: '{ __typename }' });
      for (const res of [signedIn, bearer, graphql]) expect(res.headers['cache-control']).toBe('no-store');
      const contract = await t.api.get('/openapi.json');
      expect(contract.headers['cache-control']).toBe('public, max-age=300');
    });

    it('sends no Strict-Transport-Security when COOKIE_SECURE=false (plain HTTP)', async () => {
      const res = await t.api.get('/healthz');
      expect(res.headers['strict-transport-security']).toBeUndefined();
    });

    it('answers a browser GET /graphql with the GraphiQL explorer under its own page policy (issue 16)', async () => {
      // Outside production the explorer replaces Apollo's landing page; the landing page (explorer off) and its
      // header policy are checked in test/docs-pages.test.ts ('the explorer switch').
      const res = await t.api.get('/graphql').set('accept', 'text/html');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.text).toContain('id="graphiql"');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    });
  });

  it('sends Strict-Transport-Security when served over HTTPS (COOKIE_SECURE=true)', async () => {
    const t = await startService({ COOKIE_SECURE: 'true' });
    try {
      const res = await t.api.get('/healthz');
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000');
    } finally {
      await t.stop();
    }
  });

  describe('slow and greedy clients', () => {
    let t: TestService;
    let port: number;
    beforeAll(async () => {
      t = await startService({
        HTTP_HEADERS_TIMEOUT_MS: '2000',
        HTTP_REQUEST_TIMEOUT_MS: '3000',
        HTTP_CHECK_INTERVAL_MS: '100',
        HTTP_MAX_HEADER_BYTES: String(8 * 1024),
      });
      port = await t.listen(0, '127.0.0.1');
    });
    afterAll(async () => {
      await t.stop();
    });

    it('cuts off a client sending its headers one byte a second at the headers timeout, with 408', async () => {
      const slow = 'X-Slow: abcdefghijklmnopqrstuvwxyz\r\n\r\n'.split('');
      const out = await rawClient(port, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n', slow, 1000);
      expect(out.response).toMatch(/^HTTP\/1\.1 408 /);
      expect(out.elapsedMs).toBeGreaterThanOrEqual(1900);
      expect(out.elapsedMs).toBeLessThan(5500); // the 36 bytes would take 36 s
    });

    it('cuts off a client trickling its body at the request timeout, with 408', async () => {
      const body = JSON.stringify({ email: 'slow@example.com', password: 'x'.repeat(40) });
      const head = `POST /auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
      const out = await rawClient(port, head, body.split(''), 250);
      expect(out.response).toMatch(/^HTTP\/1\.1 408 /);
      expect(out.elapsedMs).toBeGreaterThanOrEqual(2900);
      expect(out.elapsedMs).toBeLessThan(6500); // the body would take 15 s
    });

    it('serves a client that sends at a normal pace', async () => {
      const out = await rawClient(port, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      expect(out.response).toMatch(/^HTTP\/1\.1 200 /);
      expect(out.response).toContain('{"status":"ok"}');
    });

    it('answers 431 to a header block over HTTP_MAX_HEADER_BYTES and serves one under it', async () => {
      const big = await rawClient(port, `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(12 * 1024)}\r\nConnection: close\r\n\r\n`);
      expect(big.response).toMatch(/^HTTP\/1\.1 431 /);
      const fits = await rawClient(port, `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(6 * 1024)}\r\nConnection: close\r\n\r\n`);
      expect(fits.response).toMatch(/^HTTP\/1\.1 200 /);
    });
  });
});

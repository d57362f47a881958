// The verification examples shown on /docs/webhooks (issue 16), as receivers would use them: each file of
// verifier/examples/ type-checks against @svc/webhook-verifier (the Fetch one with no Node types, as on Cloudflare
// Workers), then runs behind a real HTTPS server and receives real signed deliveries from the service: the test ping
// of the control plane and a member.joined event sent by the worker's drain. A delivery whose signature does not
// match is refused 400 with the verifier's code and never reaches the handler.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { WebhookEvent } from '@svc/webhook-verifier';
import { createWebhookApp } from '../verifier/examples/express.js';
import fetchWorker, { handleWebhook } from '../verifier/examples/fetch.js';
import { drain } from '../subgraphs/webhooks/index.js';
import { createTribe, join, registerEndpoint, signupUser, type TestUser } from './factory.js';
import { isolatedDatabase, startWebhookService, waitFor, type TestService } from './support.js';

const TLS = new URL('./fixtures/tls/', import.meta.url);
const tls = { key: readFileSync(new URL('server-key.pem', TLS)), cert: readFileSync(new URL('server.pem', TLS)) };

/** An HTTPS server whose handler is set once the endpoint's secret is known. */
class ExampleReceiver {
  handler: RequestListener = (_req, res) => res.writeHead(503).end();
  readonly events: WebhookEvent[] = [];
  readonly answers: number[] = [];
  private server!: Server;
  port = 0;

  async start(): Promise<this> {
    this.server = createServer(tls, (req, res) => {
      res.on('finish', () => this.answers.push(res.statusCode));
      this.handler(req, res);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url() {
    return `https://127.0.0.1:${this.port}/webhooks/svc`;
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** Node's request as a Fetch Request, and the Response back: what Hono's node adapter or Next.js do for the example. */
const fetchAdapter = (handle: (request: Request) => Promise<Response>): RequestListener => async (req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  const request = new Request(`https://${req.headers.host}${req.url}`, {
    method: req.method,
    headers,
    body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks),
  });
  const response = await handle(request);
  const outHeaders: Record<string, string> = {};
  response.headers.forEach((value, name) => (outHeaders[name] = value));
  res.writeHead(response.status, outHeaders);
  res.end(Buffer.from(await response.arrayBuffer()));
};

function tsc(project: string): { status: number | null; output: string } {
  const bin = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const out = spawnSync(process.execPath, [bin, '-p', project], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return { status: out.status, output: `${out.stdout}${out.stderr}` };
}

describe('webhook verification examples (verifier/examples, shown on /docs/webhooks)', () => {
  let t: TestService;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let owner: TestUser;
  let handle: string;
  const express = new ExampleReceiver();
  const fetchApi = new ExampleReceiver();
  const worker = new ExampleReceiver();
  const endpoints: Record<string, { id: string; secret: string }> = {};

  beforeAll(async () => {
    db = await isolatedDatabase();
    t = await startWebhookService({ databaseUrl: db.url });
    await Promise.all([express.start(), fetchApi.start(), worker.start()]);
    owner = await signupUser(t);
    handle = (await createTribe(t, owner)).handle;
    for (const [name, r] of Object.entries({ express, fetchApi, worker })) {
      endpoints[name] = await registerEndpoint(t, owner, handle, { url: r.url(), events: ['member.joined'] });
    }
    // Each example, given the secret of its endpoint as a receiver would configure it.
    express.handler = createWebhookApp({ secret: endpoints.express!.secret, onEvent: (e) => void express.events.push(e) });
    fetchApi.handler = fetchAdapter((request) => handleWebhook(request, endpoints.fetchApi!.secret, (e) => void fetchApi.events.push(e)));
    // The Cloudflare Workers form of the same file: its default export with the secret in `env`.
    worker.handler = fetchAdapter((request) => fetchWorker.fetch(request, { SVC_WEBHOOK_SECRET: endpoints.worker!.secret }));
  });

  afterAll(async () => {
    await t?.stop();
    await Promise.all([express, fetchApi, worker].map((r) => r.stop().catch(() => undefined)));
    await db?.drop();
  });

  it('type-check: fetch.ts with the DOM library only, no Node types (as on Cloudflare Workers); express.ts is in the project tsc run', () => {
    // Both files are also type-checked by `tsc -p tsconfig.json` (npm test's first step), with Node's types, through
    // the @svc/webhook-verifier path mapping; this run proves the Fetch example needs nothing of Node.
    const web = tsc('verifier/examples/tsconfig.fetch.json');
    expect(web.output).toBe('');
    expect(web.status).toBe(0);
  });

  it("each example verifies the control plane's test ping and answers 204", async () => {
    for (const [name, r] of Object.entries({ express, fetchApi, worker })) {
      const res = await t.api.post(`/communities/${handle}/webhooks/${endpoints[name]!.id}/test`).set('cookie', owner.cookie);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ok: true, statusCode: 204, error: null });
      if (r !== worker) expect(r.events.map((e) => e.type)).toEqual(['ping']);
    }
  });

  it('each example receives a real member.joined delivery once, with its data', async () => {
    const member = await signupUser(t);
    await join(t, member, handle);
    await drain(t.deps);
    await waitFor(() => express.events.length >= 2 && fetchApi.events.length >= 2, 5000, 'member.joined at both examples');
    for (const r of [express, fetchApi]) {
      const joined = r.events.filter((e) => e.type === 'member.joined');
      expect(joined).toHaveLength(1);
      expect(joined[0]!.data).toMatchObject({ userId: member.id });
    }
    expect(worker.answers.slice(-1)).toEqual([204]);
  });

  it('a delivery that does not verify is refused 400 with its code and never reaches the handler', async () => {
    const before = [express.events.length, fetchApi.events.length];
    for (const r of [express, fetchApi]) {
      const body = JSON.stringify({ id: 'dlv_forged', type: 'member.joined', createdAt: new Date().toISOString(), data: {} });
      const res = await fetch(r.url(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
        body,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('signature_mismatch');
    }
    expect([express.events.length, fetchApi.events.length]).toEqual(before);
  });
});

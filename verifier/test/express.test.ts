import { describe, it, expect } from '@jest/globals';
import { createServer } from 'node:http';
import express, { type Request, type Response } from 'express';
import request from 'supertest';
import { expressWebhook, type WebhookRequest } from '../src/middleware.js';
import { MemorySeenStore } from '../src/dedupe.js';
import { generateTestHeaders } from '../src/node.js';
import { SECRET, deliveryBody } from './helpers.js';

/** An app whose handler echoes the verified event, with optional middleware mounted first. */
function appWith(options: { before?: express.RequestHandler[]; store?: MemorySeenStore; handlerStatus?: number } = {}) {
  const app = express();
  const seen: string[] = [];
  for (const mw of options.before ?? []) app.use(mw);
  app.post('/webhooks/svc', expressWebhook({ secret: SECRET, dedupe: options.store, maxBodyBytes: 4096 }), (req: Request, res: Response) => {
    const event = (req as WebhookRequest).webhookEvent!;
    seen.push(event.id);
    res.status(options.handlerStatus ?? 200).json({ received: event.id, type: event.type, rawIsBuffer: Buffer.isBuffer(req.body) });
  });
  return { app, seen };
}

function deliver(app: Parameters<typeof request>[0], body: string, headers = generateTestHeaders({ payload: body, secret: SECRET })) {
  return request(app).post('/webhooks/svc').set('content-type', 'application/json').set(headers).send(body);
}

describe(expressWebhook.name, () => {
  const body = deliveryBody('dlv_express', 'member.joined');

  it('verifies a delivery read from the stream and sets req.webhookEvent', async () => {
    const { app, seen } = appWith();
    const res = await deliver(app, body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 'dlv_express', type: 'member.joined', rawIsBuffer: true });
    expect(seen).toEqual(['dlv_express']);
  });

  it('uses the Buffer left by express.raw()', async () => {
    const { app } = appWith({ before: [express.raw({ type: 'application/json' })] });
    const res = await deliver(app, body);
    expect(res.status).toBe(200);
    expect(res.body.received).toBe('dlv_express');
  });

  it('reads the stream when a JSON parser is mounted but did not match the content type', async () => {
    const { app } = appWith({ before: [express.json()] });
    const headers = generateTestHeaders({ payload: body, secret: SECRET });
    const res = await request(app).post('/webhooks/svc').set('content-type', 'application/octet-stream').set(headers).send(body);
    expect(res.status).toBe(200);
  });

  it('answers 400 payload_not_raw when express.json() already parsed the body', async () => {
    const { app, seen } = appWith({ before: [express.json()] });
    const res = await deliver(app, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('payload_not_raw');
    expect(res.body.message).toMatch(/already parsed.*before express\.json\(\)/);
    expect(seen).toEqual([]);
  });

  it('answers 400 signature_mismatch for a tampered body', async () => {
    const { app, seen } = appWith();
    const headers = generateTestHeaders({ payload: body, secret: SECRET });
    const res = await deliver(app, body.replace('usr_42', 'usr_1'), headers);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error: 'signature_mismatch', message: expect.stringContaining('secret') });
    expect(seen).toEqual([]);
  });

  it('answers 400 missing_header and timestamp_out_of_range', async () => {
    const { app } = appWith();
    const unsigned = await request(app).post('/webhooks/svc').set('content-type', 'application/json').send(body);
    expect(unsigned.status).toBe(400);
    expect(unsigned.body.error).toBe('missing_header');
    const stale = generateTestHeaders({ payload: body, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect((await deliver(app, body, stale)).body.error).toBe('timestamp_out_of_range');
  });

  it('answers a duplicate delivery 200 {"duplicate":true} without calling the handler', async () => {
    const { app, seen } = appWith({ store: new MemorySeenStore() });
    expect((await deliver(app, body)).status).toBe(200);
    const again = await deliver(app, body); // a retry: new t, same id
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ duplicate: true });
    expect(seen).toEqual(['dlv_express']);
  });

  it('forgets the id when the handler answered non-2xx, so the retry is processed', async () => {
    const store = new MemorySeenStore();
    const { app, seen } = appWith({ store, handlerStatus: 503 });
    expect((await deliver(app, body)).status).toBe(503);
    expect(store.has('dlv_express')).toBe(false);
    expect((await deliver(app, body)).status).toBe(503);
    expect(seen).toEqual(['dlv_express', 'dlv_express']);
  });

  it('answers 413 over maxBodyBytes', async () => {
    const { app } = appWith();
    const big = deliveryBody('x'.repeat(5000));
    const res = await deliver(app, big);
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
  });

  it('works as plain node:http middleware', async () => {
    const verifyWebhook = expressWebhook({ secret: SECRET });
    const server = createServer((req, res) => {
      void verifyWebhook(req, res, () => res.end((req as WebhookRequest).webhookEvent!.id));
    });
    const res = await deliver(server, body);
    expect(res.status).toBe(200);
    expect(res.text).toBe('dlv_express');
  });

  it('refuses to start without a secret', () => {
    expect(() => expressWebhook({ secret: '' })).toThrow(/whsec_/);
  });
});

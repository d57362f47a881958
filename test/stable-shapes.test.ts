import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { REQUEST_PROPERTIES, RESPONSE_PROPERTIES } from '../rest-facade/src/stable-shapes.js';
import { actor, createTribe, type Actor } from './factory.js';
import { bearer, gql, startService, type TestService } from './support.js';

/**
 * rest-facade/src/stable-shapes.ts adds every property the app gives a request or a response before Express changes
 * their prototypes, so that all requests share one chain of V8's hidden classes. A property added later by a
 * middleware or a route (a new `req.something = ...`) is a class of its own for every request again: this test
 * names it.
 */
describe('requests and responses keep one shape', () => {
  let t: TestService;
  let user: Actor;
  let tribeId: string;
  /** The own properties each request and response gained while the app served it, beyond what Node gave it. */
  const added = { request: new Set<string | symbol>(), response: new Set<string | symbol>() };
  let served = 0;
  /** The string keys the last request gained, in the order it gained them. */
  let order: string[] = [];
  /** The listed request properties some request gave a value of its own (not the one stable-shapes.ts sets first). */
  const used = new Set<string | symbol>();

  beforeAll(async () => {
    t = await startService();
    user = await actor(t);
    tribeId = (await createTribe(t, user)).id;
    const app = t.http as unknown as { handle(req: IncomingMessage, res: ServerResponse, callback?: unknown): void };
    const handle = app.handle.bind(app);
    const own = (o: object) => [...Object.keys(o), ...Object.getOwnPropertySymbols(o)];
    app.handle = (req, res, callback) => {
      const request = new Set(own(req));
      const response = new Set(own(res));
      res.once('finish', () => {
        served += 1;
        for (const key of own(req)) if (!request.has(key)) added.request.add(key);
        order = Object.keys(req).filter((key) => !request.has(key));
        const values = req as unknown as Record<string | symbol, unknown>;
        for (const [key, preset] of REQUEST_PROPERTIES) if (values[key] !== preset) used.add(key);
        for (const key of own(res)) if (!response.has(key)) added.response.add(key);
      });
      handle(req, res, callback);
    };
  });
  afterAll(async () => {
    await t.stop();
  });

  it('adds nothing to a request or a response that stable-shapes.ts does not add first', async () => {
    expect((await t.api.get(`/v1/communities/${tribeId}/posts`).set(bearer(user))).status).toBe(200);
    expect((await t.api.post(`/v1/communities/${tribeId}/posts`).set(bearer(user)).send({ body: 'hello' })).status).toBe(201);
    expect((await t.api.get('/v1/communities/no-such-tribe/posts').set(bearer(user))).status).toBe(404);
    expect((await t.api.get('/v1/me').set('authorization', 'Bearer svc_pk_nope')).status).toBe(401);
    expect((await gql(t, user, '{ me { id } }')).data).toEqual({ me: { id: user.id } });
    expect((await t.api.get('/healthz')).status).toBe(200);
    expect((await t.api.get('/no/such/route')).status).toBe(404);
    expect(served).toBe(7);

    // Express's `req.res` and `res.req` come before the prototype change (app.handle): they need no place of their own.
    const known = new Set<string | symbol>([...REQUEST_PROPERTIES.map(([key]) => key), 'res']);
    expect([...added.request].filter((key) => !known.has(key)).map(String)).toEqual([]);
    const knownResponse = new Set<string | symbol>([...RESPONSE_PROPERTIES.map(([key]) => key), 'req']);
    expect([...added.response].filter((key) => !knownResponse.has(key)).map(String)).toEqual([]);
    // Added first, in the list's order, before Express's own `req.res` (which comes before the prototype change).
    const listed = REQUEST_PROPERTIES.map(([key]) => key).filter((key): key is string => typeof key === 'string');
    expect(order.slice(0, listed.length + 1)).toEqual([...listed, 'res']);
    // And the list is not padded: the requests above set most of it.
    expect(used.size).toBeGreaterThan(REQUEST_PROPERTIES.length / 2);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import request from 'supertest';
import { createService } from '../server/service.js';
import { createTribe, join, signupUser } from './factory.js';
import { gql, testConfig, type TestService } from './support.js';

/** Regressions found in review: secrets in logs, and rights that must end with the membership. */
describe('security regressions', () => {
  let t: TestService;
  const lines: string[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const service = await createService(testConfig({ LOG_LEVEL: 'info' }), { log: pino({ level: 'info' }, sink) });
    t = Object.assign(service, { api: request(service.http) });
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('request logs', () => {
    it('never contain the session token a response sets, nor query strings', async () => {
      const user = await signupUser(t);
      const token = user.cookie.split('=')[1];
      await t.api.post('/auth/login').send({ email: user.email, password: user.password });
      await t.api.get('/healthz?secret=abc123');
      const log = lines.join('');
      expect(log).toContain('request completed');
      expect(log).not.toContain(token);
      expect(log.toLowerCase()).not.toContain('set-cookie');
      expect(log).not.toContain('abc123');
    });
  });

  describe('former members', () => {
    it('cannot keep checking in to a challenge they enrolled in', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, user, tribe.handle);
      const created = await gql(t, owner, 'mutation($c: ID!, $i: CreateChallengeInput!){ createChallenge(communityId: $c, input: $i){ id } }', {
        c: tribe.id,
        i: { title: 'Daily', durationDays: 5, challengeType: 'daily', accessType: 'free' },
      });
      expect(created.errors).toBeUndefined();
      const id = created.data.createChallenge.id;
      expect((await gql(t, user, 'mutation($id: ID!){ enrollChallenge(challengeId: $id){ status } }', { id })).errors).toBeUndefined();
      const checkIn = 'mutation($id: ID!, $d: Int!){ checkIn(challengeId: $id, input: {content: "done", dayNumber: $d}){ checkin { id } } }';
      expect((await gql(t, user, checkIn, { id, d: 1 })).errors).toBeUndefined();
      expect((await gql(t, user, 'mutation($h: String!){ leaveCommunity(handle: $h) }', { h: tribe.handle })).errors).toBeUndefined();
      const after = await gql(t, user, checkIn, { id, d: 1 });
      expect(after.errors?.[0].extensions?.reason).toBe('forbidden');
    });
  });
});

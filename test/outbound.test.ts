// The service connects to nothing off this machine but its database while it starts and serves (the test's own
// requests are on loopback): @apollo/gateway, left to itself, probes the cloud metadata endpoints and reports
// usage to Apollo from every gateway it builds.
import dc from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startService, TEST_DATABASE_URL, type TestService } from './support.js';

const destinations = new Set<string>();
const record = (message: unknown) => {
  const socket = (message as { socket: Socket }).socket;
  // `lookup` names a host being resolved (even when it fails), `connect` the address reached.
  socket.once('lookup', (_error: unknown, _address: unknown, _family: unknown, host: string) => destinations.add(host));
  socket.once('connect', () => destinations.add(`${socket.remoteAddress}:${socket.remotePort}`));
};

let t: TestService;
const previous = process.env.APOLLO_TELEMETRY_DISABLED;

beforeAll(async () => {
  delete process.env.APOLLO_TELEMETRY_DISABLED; // as a process started without it
  dc.subscribe('net.client.socket', record);
  t = await startService();
});

afterAll(async () => {
  dc.unsubscribe('net.client.socket', record);
  await t?.stop();
  if (previous === undefined) delete process.env.APOLLO_TELEMETRY_DISABLED;
  else process.env.APOLLO_TELEMETRY_DISABLED = previous;
});

test('starts and answers a query without connecting off the machine (no Apollo usage report, no cloud metadata probe)', async () => {
  const res = await t.api.post('/graphql').send({ query: '{ __typename }' });
  expect(res.status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 1500)); // the probes start right after the gateway is built
  const loopback = /^(127\.|::1\b|::ffff:127\.|localhost\b)/;
  const database = TEST_DATABASE_URL ? new URL(TEST_DATABASE_URL) : undefined; // a test server elsewhere: its name, its port
  const ofDatabase = (d: string) => !!database && (d === database.hostname || d.endsWith(`:${database.port || 5432}`));
  expect([...destinations].filter((d) => !loopback.test(d) && !ofDatabase(d))).toEqual([]);
  expect(process.env.APOLLO_TELEMETRY_DISABLED).toBe('true');
});

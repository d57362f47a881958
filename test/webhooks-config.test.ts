import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../subgraphs/kernel/index.js';

describe('loadConfig (worker and webhooks)', () => {
  it("applies the spec's defaults: drain every 5 minutes, 50 a batch, 10 s per attempt, no private hosts, worker on", () => {
    const c = loadConfig({});
    expect(c.worker).toEqual({ enabled: true, pollIntervalMs: 5000, lockLifetimeMs: 120_000 });
    expect(c.webhooks).toEqual({
      drainIntervalMs: 300_000,
      fanoutIntervalMs: 10_000,
      batchSize: 50,
      timeoutMs: 10_000,
      allowedPrivateHosts: [],
      endpointsPerTribe: 16,
      testPingsPerMinute: 10,
    });
    expect(Object.isFrozen(c.webhooks)).toBe(true);
    expect(Object.isFrozen(c.webhooks.allowedPrivateHosts)).toBe(true);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      WORKER_ENABLED: 'false',
      WORKER_POLL_INTERVAL_MS: '250',
      WORKER_LOCK_LIFETIME_MS: '30000',
      WEBHOOK_DRAIN_INTERVAL_MS: '60000',
      WEBHOOK_FANOUT_INTERVAL_MS: '1000',
      WEBHOOK_BATCH_SIZE: '500',
      WEBHOOK_TIMEOUT_MS: '2500',
      WEBHOOK_ALLOWED_PRIVATE_HOSTS: ' LocalHost , 127.0.0.1,[::1], receiver.internal ',
      WEBHOOK_ENDPOINTS_PER_TRIBE: '20',
      WEBHOOK_TEST_PINGS_PER_MINUTE: '3',
    });
    expect(c.worker).toEqual({ enabled: false, pollIntervalMs: 250, lockLifetimeMs: 30_000 });
    expect(c.webhooks).toEqual({
      drainIntervalMs: 60_000,
      fanoutIntervalMs: 1000,
      batchSize: 500,
      timeoutMs: 2500,
      allowedPrivateHosts: ['localhost', '127.0.0.1', '::1', 'receiver.internal'],
      endpointsPerTribe: 20,
      testPingsPerMinute: 3,
    });
  });

  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({
        WORKER_ENABLED: 'yes',
        WEBHOOK_DRAIN_INTERVAL_MS: 'often',
        WEBHOOK_BATCH_SIZE: '0',
        WEBHOOK_TIMEOUT_MS: '120000',
        WEBHOOK_ALLOWED_PRIVATE_HOSTS: 'localhost,http://x/',
        WEBHOOK_ENDPOINTS_PER_TRIBE: '0',
        WEBHOOK_TEST_PINGS_PER_MINUTE: 'many',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    for (const name of ['WORKER_ENABLED', 'WEBHOOK_DRAIN_INTERVAL_MS', 'WEBHOOK_BATCH_SIZE', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_ALLOWED_PRIVATE_HOSTS', 'WEBHOOK_ENDPOINTS_PER_TRIBE', 'WEBHOOK_TEST_PINGS_PER_MINUTE']) {
      expect((error as Error).message).toContain(name);
    }
  });

  it('requires the lock lifetime to outlast one attempt when the worker runs', () => {
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '10000', WORKER_LOCK_LIFETIME_MS: '5000' })).toThrow(/WORKER_LOCK_LIFETIME_MS/);
    expect(loadConfig({ WORKER_ENABLED: 'false', WEBHOOK_TIMEOUT_MS: '10000', WORKER_LOCK_LIFETIME_MS: '5000' }).worker.enabled).toBe(false);
  });
});

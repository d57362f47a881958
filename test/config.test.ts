import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../subgraphs/kernel/index.js';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 4000, dataDir: './data', cookieSecure: true, databaseUrl: undefined, logLevel: 'info' });
    expect(c.jwtSecretGenerated).toBe(true);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'abc', DATABASE_URL: 'mysql://x', COOKIE_SECURE: 'maybe', JWT_SECRET: 'short' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'DATABASE_URL', 'COOKIE_SECURE', 'JWT_SECRET']) expect(message).toContain(name);
  });

  it('requires INTERNAL_SECRET with SUBGRAPH_URLS and parses the list', () => {
    expect(() => loadConfig({ SUBGRAPH_URLS: 'identity=http://a:1/graphql' })).toThrow(/INTERNAL_SECRET/);
    const c = loadConfig({ SUBGRAPH_URLS: 'identity=http://a:1/graphql, content=http://b:2/graphql', INTERNAL_SECRET: 'x'.repeat(32) });
    expect(c.subgraphUrls).toEqual({ identity: 'http://a:1/graphql', content: 'http://b:2/graphql' });
    expect(() => loadConfig({ SUBGRAPH_URLS: 'identity', INTERNAL_SECRET: 'x'.repeat(32) })).toThrow(/SUBGRAPH_URLS/);
  });

  it("hashes passwords at OWASP's argon2id minimum by default, and production starts at no lower cost", () => {
    expect(loadConfig({}).passwordHashing).toEqual({ memoryKib: 19456, iterations: 2 });
    expect(loadConfig({ PASSWORD_HASH_MEMORY_KIB: '65536', PASSWORD_HASH_ITERATIONS: '3', NODE_ENV: 'production' }).passwordHashing).toEqual({
      memoryKib: 65536,
      iterations: 3,
    });
    // Cheaper hashing is for development and tests only.
    expect(loadConfig({ PASSWORD_HASH_MEMORY_KIB: '64', PASSWORD_HASH_ITERATIONS: '1' }).passwordHashing).toEqual({ memoryKib: 64, iterations: 1 });
    expect(() => loadConfig({ NODE_ENV: 'production', PASSWORD_HASH_MEMORY_KIB: '19455' })).toThrow(
      /PASSWORD_HASH_MEMORY_KIB: must be at least 19456 in production \(OWASP's minimum for argon2id\)/,
    );
    expect(() => loadConfig({ NODE_ENV: 'production', PASSWORD_HASH_ITERATIONS: '1' })).toThrow(
      /PASSWORD_HASH_ITERATIONS: must be at least 2 in production/,
    );
    expect(() => loadConfig({ PASSWORD_HASH_MEMORY_KIB: '4' })).toThrow(/PASSWORD_HASH_MEMORY_KIB/);
  });
});

// Hive Gateway in front of the subgraphs in distributed mode (README › Behind another gateway), instead of the
// project's gateway: `INTERNAL_SECRET=... SUBGRAPH_URLS=identity=http://...,... PORT=4000 node --import tsx scripts/hive-gateway.ts`.
// For bench/peer-gateway.bench.ts: `HIVE_ROUTER_RUNTIME=true` plans with Hive Router's Rust query planner
// (@graphql-hive/router-runtime, a devDependency too), `HIVE_DEDUPLICATE_INFLIGHT=false` turns off Hive's default
// deduplication of identical in-flight subgraph requests.
// `@graphql-hive/gateway-runtime` is a devDependency here; a deployment installs it (or `@graphql-hive/gateway`, whose
// `gateway.config.ts` takes the same options) in its own project. test/hive-gateway.test.ts runs this configuration.
import { createGatewayRuntime, type GatewayConfigSupergraph } from '@graphql-hive/gateway-runtime';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

/** What another gateway needs to front the subgraphs. */
export interface HiveGatewayOptions {
  /** The supergraph SDL: `gateway/supergraph.graphql` (its `local://` URLs are replaced by `subgraphUrls`). */
  supergraph: string;
  /** Each subgraph's `/graphql` URL by name, as in `SUBGRAPH_URLS`. */
  subgraphUrls: Record<string, string>;
  /** `INTERNAL_SECRET`, sent to every subgraph as the static header `x-svc-internal-secret`. */
  internalSecret: string;
  /** Hive's deduplication of identical in-flight subgraph requests (its default: on). */
  deduplicateInflightRequests?: boolean;
}

/**
 * The Hive Gateway configuration: each subgraph at its URL, the internal secret added to every subgraph request, and
 * of the client's headers only `cookie` and `authorization` propagated (the subgraph resolves them itself). Nothing
 * else of the client's reaches a subgraph; in particular never `x-svc-caller` or `x-svc-caller-assertion`.
 */
export function hiveGatewayConfig(options: HiveGatewayOptions): GatewayConfigSupergraph {
  return {
    supergraph: options.supergraph,
    transportEntries: Object.fromEntries(
      Object.entries(options.subgraphUrls).map(([name, location]) => [
        name,
        options.deduplicateInflightRequests === false ? { location, options: { deduplicateInflightRequests: false } } : { location },
      ]),
    ),
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => ({
        'x-svc-internal-secret': options.internalSecret,
        cookie: request.headers.get('cookie'),
        authorization: request.headers.get('authorization'),
      }),
    },
    logging: 'warn',
  };
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  const secret = process.env.INTERNAL_SECRET;
  const urls = Object.fromEntries((process.env.SUBGRAPH_URLS ?? '').split(',').filter(Boolean).map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
  if (!secret || !Object.keys(urls).length) {
    console.error('usage: INTERNAL_SECRET=... SUBGRAPH_URLS=name=url,... [PORT=4000] node --import tsx scripts/hive-gateway.ts');
    process.exit(1);
  }
  const supergraph = readFileSync(new URL('../gateway/supergraph.graphql', import.meta.url), 'utf8');
  const config = hiveGatewayConfig({ supergraph, subgraphUrls: urls, internalSecret: secret, deduplicateInflightRequests: process.env.HIVE_DEDUPLICATE_INFLIGHT !== 'false' });
  const rust = process.env.HIVE_ROUTER_RUNTIME === 'true' ? { unifiedGraphHandler: (await import('@graphql-hive/router-runtime')).unifiedGraphHandler } : {};
  const gateway = createGatewayRuntime({ ...config, ...rust });
  const port = Number(process.env.PORT ?? 4000);
  createServer(gateway).listen(port, () => console.log(`Hive Gateway at http://localhost:${port}/graphql`));
}

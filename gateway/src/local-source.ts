import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { execute, isEnumType, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { toSubgraphError } from '../../subgraphs/kernel/graphql-errors.js';
import type { RequestContext } from '../../subgraphs/kernel/index.js';
import { inSpan, tracingOn } from '../../subgraphs/kernel/tracing.js';
import { subgraphFetchDuration } from '../../subgraphs/kernel/metrics.js';
import { BoundedCache, CACHE_LIMITS, documentBytes, textBytes } from './bounded-cache.js';

/**
 * The caches of fetch documents that a gateway's in-process subgraphs share, so that one budget bounds them all
 * (`CACHE_LIMITS`; keys are the subgraph's name and the text): parsed and validated documents, and fast-path runs
 * (the document, and graphql-jit's code at about twice its size once compiled).
 */
export function fetchCaches() {
  return {
    documents: new BoundedCache<DocumentNode>({ ...CACHE_LIMITS.fetchDocuments, sizeOf: (document, key) => documentBytes(document) + textBytes(key) }),
    fast: new BoundedCache<FastRun>({ ...CACHE_LIMITS.fastRuns, sizeOf: (run, key) => 3 * documentBytes(run.document) + textBytes(key) }),
  };
}

/**
 * Runs a subgraph in the gateway's process (no HTTP hop). Like Apollo's `LocalGraphQLDataSource`, but it
 * caches parsed and validated fetch documents (the query planner emits the same few strings over and over)
 * and maps domain errors to `extensions` the way a remote subgraph does. The caches are bounded in bytes and keep a
 * fetch document for good only once it comes back (`fetchCaches`, shared with the other subgraphs when given).
 */
export class LocalSubgraphSource implements GraphQLDataSource<RequestContext> {
  /** Fast-path runs of client documents (the direct path), per parsed document and operation name. */
  private readonly fastDocuments = new WeakMap<DocumentNode, Map<string, FastRun>>();
  /** Whether `fetchFast` may leave built-in scalars and enums unserialized (see there). */
  private readonly rawLeaves: boolean;

  constructor(
    readonly schema: GraphQLSchema,
    private readonly name = '',
    private readonly caches: ReturnType<typeof fetchCaches> = fetchCaches(),
  ) {
    this.rawLeaves = enumsAreNames(schema);
  }

  process(options: GraphQLDataSourceProcessOptions<RequestContext>) {
    if (!tracingOn()) return this.run(options);
    return inSpan(`subgraph ${this.name}`, { attributes: this.fetchAttributes(options.request.operationName) }, () => this.run(options));
  }

  /** With tracing on, a fetch's span: `subgraph <name>`, in process (the gateway's plan, a local plan or the direct path). */
  private fetchAttributes(operationName: string | undefined, path?: string) {
    return { 'svc.subgraph': this.name, 'svc.subgraph.in_process': true, ...(operationName ? { 'graphql.operation.name': operationName } : {}), ...(path ? { 'svc.graphql.path': path } : {}) };
  }

  private async run({ request, context }: GraphQLDataSourceProcessOptions<RequestContext>) {
    const document = this.document(request.query!);
    const result = await execute({
      schema: this.schema,
      document,
      variableValues: request.variables,
      operationName: request.operationName,
      contextValue: context,
    });
    if (!result.errors) return result as any;
    return { ...result, errors: result.errors.map((e) => toSubgraphError(e, context.app.log, context.requestId)) } as any;
  }

  /**
   * Runs a fetch document for the fast paths of `direct.ts` and `local-plan.ts`: its data, or undefined when it
   * answered any error (or could not run), and the caller then has the gateway answer, which runs graphql-js, so
   * every error stays graphql-js's and the gateway's. A document used `COMPILE_AFTER` times is compiled with
   * graphql-jit (a compilation costs 10 to 30 ms, paid only by documents that come back); before, graphql-js runs it.
   * Compiled, its String, Int, Float, Boolean and ID leaves and its enums come as the resolvers gave them, not through
   * graphql-js's serializers (graphql-jit's `disableLeafSerialization`: each leaf cost a call and three allocations),
   * when every enum of the subgraph is answered by its own name: the local plan checks every leaf it answers and
   * hands any value a serializer would have changed or refused to the gateway (`leafCheck` in local-plan.ts). The
   * direct path (`executeFast`) answers its result as it comes, so it keeps the serializers.
   */
  fetchFast(query: string, operationName: string | undefined, variables: Record<string, unknown>, context: unknown) {
    const run = () => this.timed(this.fetchFastRun(query, operationName, variables, context));
    if (tracingOn()) return inSpan(`subgraph ${this.name}`, { attributes: this.fetchAttributes(operationName, 'local-plan') }, run);
    return run();
  }

  /** The fast paths' fetches in `svc_graphql_subgraph_fetch_duration_seconds`, as the query plans' are (metrics-plugin.ts). */
  private timed<T>(fetch: Promise<T>): Promise<T> {
    const end = subgraphFetchDuration.startTimer({ subgraph: this.name });
    return fetch.finally(() => end());
  }

  private async fetchFastRun(query: string, operationName: string | undefined, variables: Record<string, unknown>, context: unknown) {
    const key = `${this.name}\n${query}`;
    let run = this.caches.fast.get(key);
    if (!run) {
      let document: DocumentNode;
      try {
        document = this.document(query);
      } catch {
        return undefined;
      }
      this.caches.fast.set(key, (run = new FastRun(this.schema, document, operationName, this.rawLeaves)));
    }
    return run.data(variables, context);
  }

  /** `fetchFast` for a client's parsed and validated document: the direct path of one-subgraph queries. */
  executeFast(document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, context: unknown) {
    const run = () => this.timed(this.executeFastRun(document, operationName, variables, context));
    if (tracingOn()) return inSpan(`subgraph ${this.name}`, { attributes: this.fetchAttributes(operationName, 'direct') }, run);
    return run();
  }

  private async executeFastRun(document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, context: unknown) {
    let byName = this.fastDocuments.get(document);
    if (!byName) this.fastDocuments.set(document, (byName = new Map()));
    let run = byName.get(operationName ?? '');
    if (!run) byName.set(operationName ?? '', (run = new FastRun(this.schema, document, operationName)));
    return run.data(variables, context);
  }

  private document(query: string): DocumentNode {
    const key = `${this.name}\n${query}`;
    let document = this.caches.documents.get(key);
    if (!document) {
      document = parse(query);
      const errors = validate(this.schema, document);
      if (errors.length > 0) throw errors[0];
      this.caches.documents.set(key, document);
    }
    return document;
  }
}

/** Uses of a document before it is compiled with graphql-jit. */
export const COMPILE_AFTER = 3;

/** Whether every enum value of a schema is its own name (no internal values), so serializing an enum changes nothing. */
function enumsAreNames(schema: GraphQLSchema): boolean {
  return Object.values(schema.getTypeMap()).every((type) => !isEnumType(type) || type.getValues().every((value) => value.value === value.name));
}

/** One document on the fast path: run by graphql-js, then compiled by graphql-jit once it has come back. */
class FastRun {
  private uses = 0;
  private compiled: CompiledQuery | null | undefined;

  constructor(
    private readonly schema: GraphQLSchema,
    readonly document: DocumentNode,
    private readonly operationName: string | undefined,
    private readonly rawLeaves = false,
  ) {}

  async data(variables: Record<string, unknown>, context: unknown): Promise<Record<string, unknown> | undefined> {
    try {
      if (this.compiled === undefined && ++this.uses >= COMPILE_AFTER) this.compiled = this.compile();
      const result = this.compiled
        ? await this.compiled.query(undefined, context, variables)
        : await execute({ schema: this.schema, document: this.document, variableValues: variables, operationName: this.operationName, contextValue: context });
      return dataOf(result);
    } catch {
      return undefined;
    }
  }

  private compile(): CompiledQuery | null {
    try {
      const compiled = compileQuery(this.schema, this.document, this.operationName, { disableLeafSerialization: this.rawLeaves });
      return isCompiledQuery(compiled) ? compiled : null;
    } catch {
      return null; // graphql-js keeps running it
    }
  }
}

function dataOf(result: { data?: unknown; errors?: readonly unknown[] }): Record<string, unknown> | undefined {
  return result.errors?.length || !result.data ? undefined : (result.data as Record<string, unknown>);
}

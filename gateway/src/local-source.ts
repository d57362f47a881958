import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { execute, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { toSubgraphError } from '../../subgraphs/kernel/graphql-errors.js';
import type { RequestContext } from '../../subgraphs/kernel/index.js';

/**
 * Runs a subgraph in the gateway's process (no HTTP hop). Like Apollo's `LocalGraphQLDataSource`, but it
 * caches parsed and validated fetch documents (the query planner emits the same few strings over and over)
 * and maps domain errors to `extensions` the way a remote subgraph does.
 */
export class LocalSubgraphSource implements GraphQLDataSource<RequestContext> {
  private readonly documents = new Map<string, DocumentNode>();
  /** Fast-path runs of fetch documents, by text (see `fetchFast`). */
  private readonly fast = new Map<string, FastRun>();
  /** Fast-path runs of client documents (the direct path), per parsed document and operation name. */
  private readonly fastDocuments = new WeakMap<DocumentNode, Map<string, FastRun>>();

  constructor(readonly schema: GraphQLSchema) {}

  async process({ request, context }: GraphQLDataSourceProcessOptions<RequestContext>) {
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
   */
  async fetchFast(query: string, operationName: string | undefined, variables: Record<string, unknown>, context: unknown) {
    let run = this.fast.get(query);
    if (!run) {
      let document: DocumentNode;
      try {
        document = this.document(query);
      } catch {
        return undefined;
      }
      if (this.fast.size > 1000) this.fast.clear();
      this.fast.set(query, (run = new FastRun(this.schema, document, operationName)));
    }
    return run.data(variables, context);
  }

  /** `fetchFast` for a client's parsed and validated document: the direct path of one-subgraph queries. */
  async executeFast(document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, context: unknown) {
    let byName = this.fastDocuments.get(document);
    if (!byName) this.fastDocuments.set(document, (byName = new Map()));
    let run = byName.get(operationName ?? '');
    if (!run) byName.set(operationName ?? '', (run = new FastRun(this.schema, document, operationName)));
    return run.data(variables, context);
  }

  private document(query: string): DocumentNode {
    let document = this.documents.get(query);
    if (!document) {
      document = parse(query);
      const errors = validate(this.schema, document);
      if (errors.length > 0) throw errors[0];
      if (this.documents.size > 1000) this.documents.clear();
      this.documents.set(query, document);
    }
    return document;
  }
}

/** Uses of a document before it is compiled with graphql-jit. */
export const COMPILE_AFTER = 3;

/** One document on the fast path: run by graphql-js, then compiled by graphql-jit once it has come back. */
class FastRun {
  private uses = 0;
  private compiled: CompiledQuery | null | undefined;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly document: DocumentNode,
    private readonly operationName: string | undefined,
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
      const compiled = compileQuery(this.schema, this.document, this.operationName);
      return isCompiledQuery(compiled) ? compiled : null;
    } catch {
      return null; // graphql-js keeps running it
    }
  }
}

function dataOf(result: { data?: unknown; errors?: readonly unknown[] }): Record<string, unknown> | undefined {
  return result.errors?.length || !result.data ? undefined : (result.data as Record<string, unknown>);
}

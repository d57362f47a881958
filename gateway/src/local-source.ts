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
  /** Compiled fetch documents (graphql-jit), by text; null when one does not compile. */
  private readonly compiled = new Map<string, CompiledQuery | null>();
  /** Compiled client documents of the direct path, per parsed document and operation name. */
  private readonly compiledDocuments = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();

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
   * Runs a fetch document compiled with graphql-jit (the fast paths of `direct.ts` and `local-plan.ts`): its data,
   * or undefined when it answered any error or does not compile. The caller then has the gateway answer, which runs
   * graphql-js, so every error stays graphql-js's and the gateway's.
   */
  async fetchCompiled(query: string, operationName: string | undefined, variables: Record<string, unknown>, context: unknown) {
    let compiled = this.compiled.get(query);
    if (compiled === undefined) {
      compiled = this.compile(this.document(query), operationName);
      if (this.compiled.size > 1000) this.compiled.clear();
      this.compiled.set(query, compiled);
    }
    return compiled ? dataOf(await compiled.query(undefined, context, variables)) : undefined;
  }

  /** `fetchCompiled` for a client's parsed (and validated) document: the direct path of one-subgraph queries. */
  async executeCompiled(document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, context: unknown) {
    let byName = this.compiledDocuments.get(document);
    if (!byName) this.compiledDocuments.set(document, (byName = new Map()));
    let compiled = byName.get(operationName ?? '');
    if (compiled === undefined) byName.set(operationName ?? '', (compiled = this.compile(document, operationName)));
    return compiled ? dataOf(await compiled.query(undefined, context, variables)) : undefined;
  }

  private compile(document: DocumentNode, operationName: string | undefined): CompiledQuery | null {
    try {
      const compiled = compileQuery(this.schema, document, operationName);
      return isCompiledQuery(compiled) ? compiled : null;
    } catch {
      return null;
    }
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

function dataOf(result: { data?: unknown; errors?: readonly unknown[] }): Record<string, unknown> | undefined {
  return result.errors?.length || !result.data ? undefined : (result.data as Record<string, unknown>);
}

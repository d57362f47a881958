import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { execute, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { toSubgraphError } from '../../subgraphs/kernel/graphql-errors.js';
import type { RequestContext } from '../../subgraphs/kernel/index.js';

/**
 * Runs a subgraph in the gateway's process (no HTTP hop). Like Apollo's `LocalGraphQLDataSource`, but it
 * caches parsed and validated fetch documents (the query planner emits the same few strings over and over)
 * and maps domain errors to `extensions` the way a remote subgraph does.
 */
export class LocalSubgraphSource implements GraphQLDataSource<RequestContext> {
  private readonly documents = new Map<string, DocumentNode>();

  constructor(private readonly schema: GraphQLSchema) {}

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

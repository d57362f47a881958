import type { ApolloServerPlugin } from '@apollo/server';
import type { RequestContext } from './context.js';

/**
 * Apollo Server plugin: records the operation type (`query`, `mutation`, `subscription`) on the request's context once
 * the operation is resolved, for gates that refuse writes (`requireWritable` in members). The gateway's context is
 * the one its in-process subgraphs see; a remote subgraph runs the plugin itself.
 */
export const operationTypePlugin: ApolloServerPlugin<RequestContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation, contextValue }) {
        if (operation) contextValue.operation = operation.operation;
      },
    };
  },
};

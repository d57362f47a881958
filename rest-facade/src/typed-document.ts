import type { Request } from 'express';
import type { OperationVariables, TypedDocumentString } from '../../gateway/src/graph.js';
import type { RestOperations } from './generated.js';

type BeforeParenthesis<T extends string> = T extends `${infer Name}(${string}` ? Name : T;

/** The operation name in a document's text (`query Name(...`, `mutation Name {...`), as a type. */
export type OperationName<T extends string> = T extends `${'query' | 'mutation'} ${infer Rest}`
  ? Rest extends `${infer Head} ${string}`
    ? BeforeParenthesis<Head>
    : BeforeParenthesis<Rest>
  : never;

type Operation<T extends string> = RestOperations[OperationName<T> & keyof RestOperations];

/**
 * A fixed document of the REST facade, typed with what `npm run codegen` generated for its operation (found by
 * the operation's name in its text). The text is returned unchanged. A document codegen does not know yet (a new
 * one, or a renamed operation) does not type-check until the generated file is regenerated.
 */
export function restDocument<const T extends string>(
  text: OperationName<T> extends keyof RestOperations ? T : never,
): TypedDocumentString<Operation<T>['result'], Operation<T>['variables']> {
  return text;
}

/** Runs a fixed document for an HTTP request (as its caller) and answers its data, or throws its first error. */
export type RequestRunner = <TResult, TVariables>(
  req: Request,
  document: TypedDocumentString<TResult, TVariables>,
  variables: OperationVariables<TVariables>,
) => Promise<TResult>;

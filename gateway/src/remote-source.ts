import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { Headers, Pool, Response } from 'undici';
import { SERVICE_UNAVAILABLE } from '../../subgraphs/kernel/graphql-errors.js';
import { type AssertedCaller, CALLER_ASSERTION_HEADER, callerAssertionKey, reusedAssertion } from '../../subgraphs/kernel/caller-assertion.js';
import { INTERNAL_SECRET_HEADER, type RequestContext } from '../../subgraphs/kernel/index.js';
import { subgraphFetchDuration } from '../../subgraphs/kernel/metrics.js';
import { inSpan, injectTraceHeaders, tracingOn } from '../../subgraphs/kernel/tracing.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * What the gateway answers for fields of a subgraph it cannot reach: `SERVICE_UNAVAILABLE` with status 503, the
 * code a database outage has (`kernel/graphql-errors.ts`), so the REST surfaces answer it as their 503.
 */
export function subgraphUnavailable(name: string): GraphQLError {
  return new GraphQLError(`The ${name} service is temporarily unavailable; retry later.`, { extensions: { code: SERVICE_UNAVAILABLE, status: 503 } });
}

/** Options of one remote subgraph. */
export interface RemoteSourceOptions {
  /** The subgraph's name, shown in the unavailable error. */
  name: string;
  url: string;
  /** The shared `INTERNAL_SECRET`. */
  secret: string;
  /** Limit on one call (connect to end of body), so a frozen subgraph fails instead of holding requests. */
  timeoutMs: number;
  /** Identical query fetches of one caller in flight at once share one call (`SUBGRAPH_DEDUPLICATE_INFLIGHT`). */
  deduplicateInflight?: boolean;
  log: Logger;
}

/** What Apollo's `sendRequest` takes and answers (the parsed body and the HTTP response). */
interface SubgraphRequest {
  query?: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  http?: { method: string; headers: Iterable<[string, string]> };
}
interface SubgraphAnswer {
  data?: unknown;
  errors?: unknown;
  extensions?: unknown;
  /** What Apollo reads of the response: its `Cache-Control` header (`respond`). */
  http?: { status: number; headers: Headers };
}
type SendRequest = (request: SubgraphRequest, context: RequestContext) => Promise<SubgraphAnswer>;
/** A subgraph call in flight, which identical calls of the same caller join. */
interface Flight {
  answer: Promise<SubgraphAnswer>;
  callers: number;
}

/**
 * On a request's context: the answers of the local plan's fetches that made it fall through (an error, or no answer),
 * by fetch, which the gateway's run of the same request then takes instead of sending those fetches again.
 */
const FALLEN_THROUGH = Symbol('fallenThrough');
type WithAnswers = RequestContext & { [FALLEN_THROUGH]?: Map<string, Promise<SubgraphAnswer>> };
const fetchKey = (query: string | undefined, operationName: string | undefined, variables: unknown) => JSON.stringify([query, operationName ?? null, variables ?? null]);

/** A document the gateway sends that only reads: its operation is a query (the gateway writes `query ...` or `{`). */
const isQuery = (document: string) => /^\s*(?:query\b|\{)/.test(document);

/**
 * Calls a subgraph over HTTP, proving with the shared secret that it is the gateway and passing the caller (user,
 * session, Platform API key, client address) as an assertion signed for that subgraph (`caller-assertion.ts`), reused
 * for the same caller for 10 s. A subgraph that refuses the connection, resets it, does not answer within
 * `timeoutMs` or answers 5xx gives `SERVICE_UNAVAILABLE`.
 */
export class InternalRemoteSource extends RemoteGraphQLDataSource<RequestContext> {
  private readonly options: RemoteSourceOptions;
  /** The caller's assertion for this subgraph, reused for the same caller for a few seconds (`reusedAssertion`). */
  private readonly assertion: (who: AssertedCaller) => Promise<string>;
  /** Keep-alive connections to the subgraph (undici), closed by `close`. */
  private readonly pool: Pool;
  private readonly path: string;

  constructor(options: RemoteSourceOptions) {
    super({ url: options.url });
    this.options = options;
    this.assertion = reusedAssertion(callerAssertionKey(options.secret), options.name);
    const url = new URL(options.url);
    this.pool = new Pool(url.origin, { keepAliveTimeout: 4_000 });
    this.path = url.pathname + url.search;
    (this as unknown as { sendRequest: SendRequest }).sendRequest = (request, context) => this.sendOnPool(request, context);
    if (options.deduplicateInflight) this.deduplicateInflight();
    this.reuseFallenThrough();
  }

  /**
   * A fetch of a local plan (`local-plan.ts`) on this subgraph: the request the gateway's run would send (the same
   * headers, document, variables and operation name, through the same `sendRequest`, so in-flight deduplication
   * applies too), timed as the gateway's fetches are. Its data, or undefined when the answer has an error, is not a
   * 2xx or did not come: the gateway then runs the request, and its run takes that answer (or failure) for the same
   * fetch instead of sending it again (`reuseFallenThrough`), so a subgraph is never called twice for one fetch and
   * every error is answered by the gateway as before (the fetch's time is recorded here; the gateway's run records
   * the hand-over too, as a fetch of next to no time).
   */
  fetchFast(query: string, operationName: string | undefined, variables: Record<string, unknown>, context: unknown): Promise<Record<string, unknown> | undefined> {
    const run = () => this.fetchFastRun(query, operationName, variables, context as WithAnswers);
    if (!tracingOn()) return run();
    const attributes = { 'svc.subgraph': this.options.name, 'url.full': this.url ?? '', 'svc.graphql.path': 'local-plan', ...(operationName ? { 'graphql.operation.name': operationName } : {}) };
    return inSpan(`subgraph ${this.options.name}`, { kind: 'client', attributes }, run);
  }

  private async fetchFastRun(query: string, operationName: string | undefined, variables: Record<string, unknown>, context: WithAnswers) {
    const headers = new Headers({ 'content-type': 'application/json' });
    const request: SubgraphRequest = { query, variables, ...(operationName === undefined ? {} : { operationName }), http: { method: 'POST', headers } };
    const end = subgraphFetchDuration.startTimer({ subgraph: this.options.name });
    let answer: Promise<SubgraphAnswer> | undefined;
    try {
      await this.willSendRequest({ request, context } as unknown as GraphQLDataSourceProcessOptions<RequestContext>);
      answer = (this as unknown as { sendRequest: SendRequest }).sendRequest(request, context);
      const received = await answer;
      if (!received.errors && received.data && typeof received.data === 'object') return received.data as Record<string, unknown>;
    } catch {
      // a failure to answer: the gateway's run meets the same one (or, when nothing was sent, sends the fetch itself)
    } finally {
      end();
    }
    if (answer) (context[FALLEN_THROUGH] ??= new Map()).set(fetchKey(query, operationName, variables), answer);
    return undefined;
  }

  /** The gateway's fetches take the answer a local plan's fetch of the same request fell through on (`fetchFast`). */
  private reuseFallenThrough(): void {
    const self = this as unknown as { sendRequest: SendRequest };
    const send = self.sendRequest.bind(this);
    self.sendRequest = (request, context) => {
      const answers = (context as WithAnswers)[FALLEN_THROUGH];
      if (answers?.size) {
        const key = fetchKey(request.query, (request as { operationName?: string }).operationName, request.variables);
        const answer = answers.get(key);
        if (answer) {
          answers.delete(key);
          return answer;
        }
      }
      return send(request, context);
    };
  }

  /** Closes the connections to the subgraph (the gateway's stop). */
  close(): Promise<void> {
    return this.pool.close();
  }

  /**
   * Replaces Apollo's `sendRequest` (private in its types, called by `process` after `willSendRequest`): the same
   * request and answer, sent on a keep-alive undici pool instead of make-fetch-happen, without the `node-fetch`
   * request Apollo builds for each call, within `timeoutMs` from the call to the end of the answer's body.
   */
  private async sendOnPool(request: SubgraphRequest, context: RequestContext): Promise<SubgraphAnswer> {
    const { http, ...body } = request;
    let status: number | undefined;
    try {
      const response = await this.pool.request({
        path: this.path,
        method: 'POST',
        headers: { ...Object.fromEntries(http?.headers ?? []), 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const headers = new Headers();
      for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      const text = await response.body.text();
      status = response.statusCode; // a whole answer (a body cut or timed out is a network failure, no response)
      if (status < 200 || status > 299) throw await this.errorFromResponse(new Response(text, { status, headers }));
      const parsed: unknown = headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text;
      if (typeof parsed !== 'object' || parsed === null) throw new Error(`Expected JSON response body, but received: ${text}`);
      return { ...(parsed as SubgraphAnswer), http: { status, headers } };
    } catch (error) {
      this.didEncounterError(error as Error, undefined, status === undefined ? undefined : { status }, context);
      throw error;
    }
  }

  /**
   * Replaces Apollo's `sendRequest` (private in its types, called by `process` after `willSendRequest`): a query
   * identical to one in flight (document and variables) for the same caller (user, session, API key and client
   * address: what the caller assertion vouches for) waits for that call's answer instead of sending its own. Each
   * caller gets its own copy of the data (the gateway merges answers into its result in place); the answer's HTTP
   * response (headers, for the cache policy) is shared, read-only. Mutations are always sent.
   */
  private deduplicateInflight(): void {
    const self = this as unknown as { sendRequest: SendRequest };
    const send = self.sendRequest.bind(this);
    const inflight = new Map<string, Flight>();
    self.sendRequest = (request, context) => {
      if (!request.query || !isQuery(request.query)) return send(request, context);
      const key = JSON.stringify([request.query, request.variables ?? null, context.caller, context.apiKey ?? null, context.clientAddress ?? null]);
      let flight = inflight.get(key);
      if (!flight) {
        flight = { answer: send(request, context).finally(() => inflight.delete(key)), callers: 0 };
        inflight.set(key, flight);
      }
      flight.callers += 1;
      const shared = flight;
      return shared.answer.then((a) =>
        shared.callers === 1 ? a : { ...a, data: structuredClone(a.data), errors: structuredClone(a.errors), extensions: structuredClone(a.extensions) },
      );
    };
  }

  /** With tracing on, each fetch is a client span `subgraph <name>`, whose context the subgraph receives as `traceparent`. */
  override process(options: GraphQLDataSourceProcessOptions<RequestContext>) {
    if (!tracingOn()) return super.process(options);
    const attributes = { 'svc.subgraph': this.options.name, 'url.full': this.url ?? '', ...(options.request.operationName ? { 'graphql.operation.name': options.request.operationName } : {}) };
    return inSpan(`subgraph ${this.options.name}`, { kind: 'client', attributes }, () => super.process(options));
  }

  override async willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<RequestContext>): Promise<void> {
    request.http?.headers.set(INTERNAL_SECRET_HEADER, this.options.secret);
    request.http?.headers.set(REQUEST_ID_HEADER, context.requestId ?? '');
    if (request.http) injectTraceHeaders((name, value) => request.http!.headers.set(name, value)); // nothing when tracing is off
    const assertion = this.assertionFor(context as RequestContext);
    if (assertion) request.http?.headers.set(CALLER_ASSERTION_HEADER, await assertion);
  }

  /** The request's assertion for this subgraph (none when there is nothing to vouch for). */
  private assertionFor(context: RequestContext): Promise<string> | null {
    if (!context.caller && !context.apiKey && !context.clientAddress) return null;
    return this.assertion({ caller: context.caller, apiKey: context.apiKey ?? null, clientAddress: context.clientAddress });
  }

  override didEncounterError(error: Error, _request: unknown, response?: { status: number }, context?: RequestContext): void {
    // No whole response: refused, reset, DNS, the timeout, a body cut short (network level); or a 5xx.
    if (!response || response.status >= 500) {
      this.options.log.warn({ subgraph: this.options.name, err: error, status: response?.status, requestId: context?.requestId }, 'subgraph unavailable');
      throw subgraphUnavailable(this.options.name);
    }
    throw error;
  }
}

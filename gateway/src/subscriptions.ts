import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  extendSchema,
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  Kind,
  OperationTypeNode,
  parse,
  print,
  specifiedRules,
  validate,
  visit,
  type DefinitionNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldDefinitionNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type ObjectTypeDefinitionNode,
  type OperationDefinitionNode,
} from 'graphql';
import { CloseCode, type Context, type SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AppDeps, Caller, RequestContext } from '../../subgraphs/kernel/index.js';
import { listenForSignals, SignalRouter, type RealtimeSignal, type Route, type SignalListener } from '../../subgraphs/realtime/index.js';
import { costRefusal } from './cost-limit.js';
import type { Graph } from './graph.js';
import { QUERY_LIMITS, queryLimitsRule } from './limits.js';

/**
 * Limits of the WebSocket endpoint (documented in the README, "Real time"). A user's connection beyond
 * `connectionsPerUser` is closed with `CLOSE_TOO_MANY_CONNECTIONS`; a subscription beyond `subscriptionsPerSocket`
 * on one connection is answered with an error (code RATE_LIMITED) and the connection stays open.
 */
export const REALTIME_LIMITS = Object.freeze({
  /** Concurrent authenticated sockets of one user in one process (a browser tab holds one). */
  connectionsPerUser: 10,
  /** Concurrent subscriptions on one socket. */
  subscriptionsPerSocket: 20,
  /** Largest WebSocket message accepted from a client (a subscribe message carries one document). */
  maxPayloadBytes: 64 * 1024,
  /** Re-reads run for subscribers at once in this process (the rest wait their turn; the pool stays free for HTTP). */
  deliveriesInFlight: 32,
  /**
   * How old a connection's credential check may be before a delivery or a subscribe message checks it again (session
   * ended: 4401). A sign-out closes the sockets it ends at once (`signedOut` signals); this check is the backstop for
   * one lost while the LISTEN was down (after a reconnect every socket is checked again at its next message).
   */
  recheckCredentialMs: 60_000,
});

export type RealtimeLimits = { readonly [K in keyof typeof REALTIME_LIMITS]: number };

/** Close code of a connection without valid credentials (graphql-ws `Unauthorized`: clients do not retry it). */
export const CLOSE_UNAUTHORIZED = CloseCode.Unauthorized; // 4401
/** Close code of a user's connection beyond `connectionsPerUser` (clients of graphql-ws do not retry it). */
export const CLOSE_TOO_MANY_CONNECTIONS = 4429;

/** The handshake of a WebSocket connection as authentication sees it. */
export interface Handshake {
  headers: IncomingHttpHeaders;
}

/**
 * The caller of a connection, and the credential it signed in with, named as `signedOut` realtime signals name it (a
 * session, a refresh-token family): a signal naming it closes the socket. Without one, only a signal for every
 * socket of the user does.
 */
export type SocketCaller = Caller & { credential?: string };

/**
 * Who a connection is for, from its upgrade request (the web app's cookies) or its `connection_init` payload
 * (`authorization: "Bearer <resource API access token>"`); null refuses the connection (4401).
 */
export type Authenticate = (handshake: Handshake, connectionParams: Readonly<Record<string, unknown>> | undefined) => Promise<SocketCaller | null>;

/** The users taking part in a conversation now (the engagement domain answers it). */
export type ParticipantsOf = (app: AppDeps, conversationId: string) => Promise<string[]>;

export interface SubscriptionOptions {
  app: AppDeps;
  graph: Graph;
  authenticate: Authenticate;
  /** Who hears a conversation's `conversationUpdated`; without it that subscription field is not served. */
  participantsOf?: ParticipantsOf;
  path?: string;
  limits?: Partial<RealtimeLimits>;
}

/** The WebSocket side of one process: its sockets, its subscriptions, its LISTEN. */
export interface SubscriptionServer {
  /** Open sockets. */
  readonly clients: number;
  /** Live subscriptions (router handlers) in this process. */
  readonly subscriptions: number;
  readonly router: SignalRouter;
  readonly listener: SignalListener;
  /** The subscription fields this process serves. */
  readonly fields: readonly string[];
  /** Closes every socket (1001 going away), stops listening, detaches from the HTTP server. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------
// The subscription schema: the supergraph's API schema plus the engagement domain's Subscription type

interface FieldSource {
  /** The query field run for the subscriber when a signal arrives. */
  query: string;
  /** The route a subscription of this caller (and arguments) listens on. */
  route(userId: string, args: Record<string, unknown>): Route;
  /** The id of the row a signal names, passed to the query field as `id` (none: the field takes no id). */
  id?(signal: RealtimeSignal): string | undefined;
  /** Signals that arrive while one re-read is waiting fold into it (counts: only the latest value matters). */
  coalesce?: boolean;
}

const FIELD_SOURCES: Record<string, FieldSource> = {
  notificationAdded: {
    query: 'notification',
    route: (userId) => `notification:${userId}`,
    id: (s) => (s.topic === 'notification' ? s.notificationId : undefined),
  },
  unreadCountsChanged: { query: 'unreadCounts', route: (userId) => `unread:${userId}`, coalesce: true },
  messageAdded: {
    query: 'message',
    route: (_userId, args) => `message:${String(args.conversationId)}`,
    id: (s) => (s.topic === 'message' ? s.messageId : undefined),
  },
  // A conversation signal names the conversation: it is routed to each participant's `conversation:<userId>`.
  conversationUpdated: {
    query: 'conversation',
    route: (userId) => `conversation:${userId}`,
    id: (s) => (s.topic === 'conversation' ? s.conversationId : undefined),
  },
};

const SUBSCRIPTION_SDL = readFileSync(new URL('../../subgraphs/engagement/subscriptions.graphql', import.meta.url), 'utf8');

/**
 * The API schema extended with the engagement domain's `Subscription` type. A field whose type or query field the
 * supergraph lacks (a domain not built yet, or `conversationUpdated` without `participantsOf`) is left out, so the
 * rest still works; `fields` lists what is served.
 */
export function subscriptionSchema(api: GraphQLSchema, served: (field: string) => boolean = () => true): { schema: GraphQLSchema; fields: string[] } {
  const sdl = parse(SUBSCRIPTION_SDL);
  const query = api.getQueryType()?.getFields() ?? {};
  const definitions: DefinitionNode[] = sdl.definitions.map((d) => {
    if (d.kind !== Kind.OBJECT_TYPE_DEFINITION || d.name.value !== 'Subscription') return d;
    const fields = (d.fields ?? []).filter((f: FieldDefinitionNode) => {
      const source = FIELD_SOURCES[f.name.value];
      let type = f.type;
      while (type.kind !== Kind.NAMED_TYPE) type = type.type;
      return source && served(f.name.value) && query[source.query] && api.getType(type.name.value);
    });
    return { ...d, fields } as ObjectTypeDefinitionNode;
  });
  const subscription = definitions.find((d) => d.kind === Kind.OBJECT_TYPE_DEFINITION) as ObjectTypeDefinitionNode;
  const fields = (subscription.fields ?? []).map((f) => f.name.value);
  if (!fields.length) return { schema: api, fields };
  const root = parse('extend schema { subscription: Subscription }').definitions;
  return { schema: extendSchema(api, { kind: Kind.DOCUMENT, definitions: [...definitions, ...root] }), fields };
}

// ---------------------------------------------------------------------------------------------------------
// One subscription: the query it runs on each signal, and the stream it feeds

/** What a subscription runs for its subscriber each time its route hears a signal. */
interface Plan {
  field: string;
  source: FieldSource;
  route: Route;
  /** The response key (the field's alias, or its name). */
  key: string;
  /** The derived query's text (stable per subscription, so Apollo's document and plan caches hit). */
  text: string;
  variables: Record<string, unknown>;
  /** The variable that carries the signal's id. */
  idVariable: string;
  /** `messageAdded`: its conversation, whose visibility ends the stream when lost. */
  conversationId?: string;
}

/** A validated subscription, handed from `onSubscribe` to `subscribe` as graphql-ws's context value. */
interface Prepared {
  plan: Plan;
  extra: Extra;
}

const refusal = (message: string, code: string, reason?: string) => new GraphQLError(message, { extensions: { code, ...(reason ? { reason } : {}) } });

/** Names of the fragments `node` spreads, directly or through other fragments of `fragments`. */
function reachableFragments(node: FieldNode, fragments: Map<string, FragmentDefinitionNode>): FragmentDefinitionNode[] {
  const found = new Map<string, FragmentDefinitionNode>();
  const walk = (n: FieldNode | FragmentDefinitionNode) =>
    visit(n, {
      FragmentSpread(spread) {
        const name = spread.name.value;
        const fragment = fragments.get(name);
        if (!fragment || found.has(name)) return;
        found.set(name, fragment);
        walk(fragment);
      },
    });
  walk(node);
  return [...found.values()];
}

/**
 * The query a subscription runs on each signal: its root field's selection set under the matching query field,
 * aliased to the subscription's response key (`messageAdded { id body }` → `query($realtimeId: ID!) {
 * messageAdded: message(id: $realtimeId) { id body } }`), with the variables and fragments it uses.
 */
function derivedQuery(operation: OperationDefinitionNode, document: DocumentNode, field: FieldNode, source: FieldSource, variables: Record<string, unknown>) {
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  const used = reachableFragments(field, fragments);
  const names = new Set<string>();
  // The subscription field's own arguments are not carried over (the query field takes the signal's id instead).
  const carried = [...(field.selectionSet ? [field.selectionSet] : []), ...(field.directives ?? []), ...used];
  for (const node of carried) visit(node, { Variable: (v) => void names.add(v.name.value) });
  let idVariable = 'realtimeId';
  for (let i = 1; names.has(idVariable) || (operation.variableDefinitions ?? []).some((d) => d.variable.name.value === idVariable); i++) idVariable = `realtimeId${i}`;
  const variable = (name: string) => ({ kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: name } }) as const;
  const root: FieldNode = {
    kind: Kind.FIELD,
    alias: { kind: Kind.NAME, value: field.alias?.value ?? field.name.value },
    name: { kind: Kind.NAME, value: source.query },
    arguments: source.id ? [{ kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: 'id' }, value: variable(idVariable) }] : [],
    directives: field.directives,
    selectionSet: field.selectionSet,
  };
  const query: OperationDefinitionNode = {
    kind: Kind.OPERATION_DEFINITION,
    operation: OperationTypeNode.QUERY,
    name: operation.name,
    variableDefinitions: [
      ...(operation.variableDefinitions ?? []).filter((d) => names.has(d.variable.name.value)),
      ...(source.id
        ? [{ kind: Kind.VARIABLE_DEFINITION, variable: variable(idVariable), type: { kind: Kind.NON_NULL_TYPE, type: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: 'ID' } } } } as const]
        : []),
    ],
    directives: [],
    selectionSet: { kind: Kind.SELECTION_SET, selections: [root] },
  };
  const kept = Object.fromEntries(Object.entries(variables).filter(([name]) => names.has(name)));
  return { text: print({ kind: Kind.DOCUMENT, definitions: [query, ...used] }), variables: kept, idVariable };
}

/**
 * The stream graphql-ws reads a subscription's events from. Unlike an async generator, `return()` ends it at once
 * even while a reader waits (graphql-ws calls it when the client completes or the socket closes), and runs `cleanup`.
 */
class LiveStream implements AsyncIterableIterator<ExecutionResult> {
  private readonly queue: ExecutionResult[] = [];
  private waiting: { resolve(r: IteratorResult<ExecutionResult>): void; reject(e: unknown): void } | null = null;
  private failure: unknown = null;
  done = false;

  constructor(private readonly cleanup: () => void) {}

  push(result: ExecutionResult): void {
    if (this.done) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w.resolve({ value: result, done: false });
    } else this.queue.push(result);
  }

  /** Ends the stream with `error` after what is queued (graphql-ws sends it as an `error` message). */
  fail(error: GraphQLError): void {
    if (this.done) return;
    this.end();
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w.reject(error);
    } else this.failure = error;
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    if (this.queue.length) return Promise.resolve({ value: this.queue.shift()!, done: false });
    if (this.failure) {
      const error = this.failure;
      this.failure = null;
      return Promise.reject(error);
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  return(): Promise<IteratorResult<ExecutionResult>> {
    this.end();
    this.queue.length = 0;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w.resolve({ value: undefined, done: true });
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  private end() {
    if (this.done) return;
    this.done = true;
    this.cleanup();
  }
}

/** At most `max` tasks at once; the others wait in arrival order. */
class Gate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly max: number) {}
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running += 1;
    try {
      return await task();
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The server

/** What this module keeps per socket (graphql-ws's `extra`). */
type Extra = {
  socket: WebSocket;
  request: IncomingMessage;
  state?: SocketState;
};

interface SocketState {
  id: string;
  caller: Caller;
  /** The credential the socket signed in with (`SocketCaller.credential`). */
  credential?: string;
  /** Set when the socket is being closed for its credential: nothing more is pushed on it. */
  signedOut?: boolean;
  handshake: Handshake;
  params: Readonly<Record<string, unknown>> | undefined;
  checkedAt: number;
}

/**
 * Serves GraphQL subscriptions over WebSocket (graphql-ws protocol) on `path` of `server` (an HTTP upgrade): the
 * connection is authenticated once (`authenticate`; 4401 without a user), each subscription re-runs its selection
 * set as a query through the gateway for its subscriber whenever the realtime channel names a row it waits on, and
 * pushes the result when the subscriber may see it. Resolves once this process listens on the channel.
 */
export async function attachSubscriptions(server: Server, options: SubscriptionOptions): Promise<SubscriptionServer> {
  const { app, graph, authenticate, participantsOf } = options;
  const path = options.path ?? '/graphql';
  const limits: RealtimeLimits = { ...REALTIME_LIMITS, ...options.limits };
  const log = app.log.child({ part: 'realtime' });
  const { schema, fields } = subscriptionSchema(graph.apiSchema, (field) => field !== 'conversationUpdated' || Boolean(participantsOf));
  const rules = [...specifiedRules, queryLimitsRule()];
  const router = new SignalRouter();
  const gate = new Gate(limits.deliveriesInFlight);
  const connections = new Map<string, number>();
  /** The open, authenticated sockets of each user in this process. */
  const socketsOf = new Map<string, Set<Extra>>();
  let conversationWatchers = 0;

  /** Closes `extra`'s socket with 4401: its credential no longer holds. Nothing more is pushed on it. */
  const refuse = (extra: Extra) => {
    if (extra.state) extra.state.signedOut = true;
    extra.socket.close(CLOSE_UNAUTHORIZED, 'Unauthorized');
  };

  /** A `signedOut` signal: closes the sockets of the credential it names (every socket of the user), but `keep`'s. */
  const signOut = (signal: Extract<RealtimeSignal, { topic: 'signedOut' }>) => {
    for (const extra of [...(socketsOf.get(signal.userId) ?? [])]) {
      const credential = extra.state?.credential;
      if (signal.credential !== undefined && credential !== signal.credential) continue;
      if (signal.keep !== undefined && credential === signal.keep) continue;
      refuse(extra);
    }
  };

  const onSignal = (signal: RealtimeSignal) => {
    if (signal.topic === 'signedOut') {
      signOut(signal);
      return;
    }
    if (signal.topic !== 'conversation') {
      router.dispatch(signal);
      return;
    }
    if (!participantsOf || conversationWatchers === 0) return;
    participantsOf(app, signal.conversationId).then(
      (users) => users.forEach((userId) => router.dispatch(signal, `conversation:${userId}`)),
      (error) => log.error({ err: error }, 'realtime: reading the participants of a conversation failed'),
    );
  };
  // After a gap in the LISTEN (a database restart), every unreadCountsChanged subscriber gets its current counts:
  // what changed during the gap is otherwise only seen at the next signal. A sign-out of the gap is lost too: every
  // socket checks its credential again before its next push or subscription.
  const afterGap = () => {
    for (const sockets of socketsOf.values()) for (const extra of sockets) if (extra.state) extra.state.checkedAt = -Infinity;
    router.keysOf('unread').forEach((userId) => router.dispatch({ topic: 'unread', userId }));
  };
  const listener = await listenForSignals(app.database, onSignal, log, afterGap);

  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxPayloadBytes });
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (pathname !== path) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  };
  server.on('upgrade', onUpgrade);

  const contextOf = (state: SocketState): RequestContext => ({ app, caller: state.caller, requestId: `ws-${state.id}-${randomUUID()}` });

  /** Runs the derived query for `state`'s user and returns the result (fresh context: fresh DataLoaders). */
  const run = async (state: SocketState, text: string, variables: Record<string, unknown>): Promise<ExecutionResult> => {
    const response = await graph.server.executeOperation({ query: text, variables }, { contextValue: contextOf(state) });
    if (response.body.kind !== 'single') throw new Error('incremental delivery is not used by subscriptions');
    return response.body.singleResult as ExecutionResult;
  };

  /** Whether the connection's credential still holds (checked again at most every `recheckCredentialMs`). */
  const stillSignedIn = async (extra: Extra, state: SocketState): Promise<boolean> => {
    if (state.signedOut) return false;
    if (Date.now() - state.checkedAt < limits.recheckCredentialMs) return true;
    state.checkedAt = Date.now();
    const caller = await authenticate(state.handshake, state.params);
    if (caller?.userId === state.caller.userId && !state.signedOut) return true;
    refuse(extra);
    return false;
  };

  /** Re-reads the row `signal` names for the subscriber and pushes it if they may see it. */
  const deliver = async (extra: Extra, state: SocketState, plan: Plan, stream: LiveStream, signal: RealtimeSignal) => {
    if (stream.done || !(await stillSignedIn(extra, state))) return;
    const id = plan.source.id?.(signal);
    if (plan.source.id && !id) return;
    const result = await run(state, plan.text, id ? { ...plan.variables, [plan.idVariable]: id } : plan.variables);
    if (stream.done || state.signedOut) return;
    const value = result.data?.[plan.key];
    if (value !== null && value !== undefined) {
      stream.push({ data: { [plan.key]: value }, ...(result.errors ? { errors: result.errors } : {}) });
      return;
    }
    // Not visible: nothing is pushed. A conversation's stream ends once its subscriber may no longer read it.
    if (plan.conversationId && !(await conversationVisible(state, plan.conversationId)).visible) {
      stream.fail(refusal('You are no longer a participant of this conversation.', 'FORBIDDEN', 'not_a_participant'));
    }
  };

  /** Whether `state`'s user may read the conversation now: the query a client would run, with its errors. */
  const conversationVisible = async (state: SocketState, conversationId: string) => {
    const seen = await run(state, 'query RealtimeConversation($id: ID!) { conversation(id: $id) { id } }', { id: conversationId });
    return { visible: Boolean((seen.data as { conversation?: unknown } | null | undefined)?.conversation), errors: seen.errors };
  };

  /** Validates a subscribe message and prepares its plan; GraphQL errors refuse it. */
  const prepare = async (extra: Extra, payload: SubscribePayload): Promise<ExecutionArgs | readonly GraphQLError[]> => {
    const state = extra.state!;
    let document: DocumentNode;
    try {
      document = parse(payload.query, { maxTokens: QUERY_LIMITS.tokens });
    } catch (error) {
      return [error instanceof GraphQLError ? error : refusal('Syntax error.', 'GRAPHQL_PARSE_FAILED')];
    }
    const invalid = validate(schema, document, rules);
    if (invalid.length) return invalid;
    const operation = getOperationAST(document, payload.operationName);
    if (!operation) return [refusal('Unable to identify the operation.', 'BAD_USER_INPUT')];
    if (operation.operation !== OperationTypeNode.SUBSCRIPTION) {
      return [refusal('Only subscriptions are served over WebSocket; send queries and mutations as HTTP POST to /graphql.', 'BAD_USER_INPUT', 'not_a_subscription')];
    }
    const [selection] = operation.selectionSet.selections;
    if (operation.selectionSet.selections.length !== 1 || selection.kind !== Kind.FIELD) {
      return [refusal('A subscription selects exactly one field, directly (no fragment at its root).', 'BAD_USER_INPUT', 'one_root_field')];
    }
    const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], payload.variables ?? {});
    if (coerced.errors) return coerced.errors;
    const field = selection.name.value;
    const source = FIELD_SOURCES[field];
    const definition = schema.getSubscriptionType()!.getFields()[field];
    if (!source || !definition) return [refusal(`Cannot subscribe to "${field}".`, 'BAD_USER_INPUT')];
    // A subscribe message is charged to its user's GraphQL budget as an operation over HTTP is (`cost-limit.ts`).
    const charge = await graph.cost.charge(contextOf(state), schema, document, operation);
    if (charge.refusal) return [costRefusal(charge.refusal, false)];
    const args = getArgumentValues(definition, selection, coerced.coerced);
    const conversationId = field === 'messageAdded' ? String(args.conversationId) : undefined;
    if (conversationId) {
      // Only a participant may listen to a conversation.
      const { visible, errors } = await conversationVisible(state, conversationId);
      if (!visible) return (errors?.length ? errors : [refusal('No such conversation.', 'NOT_FOUND')]).map((e) => new GraphQLError(e.message, { extensions: e.extensions }));
    }
    const derived = derivedQuery(operation, document, selection, source, payload.variables ?? {});
    const plan: Plan = { field, source, route: source.route(state.caller.userId, args), key: selection.alias?.value ?? field, conversationId, ...derived };
    const prepared: Prepared = { plan, extra };
    return { schema, document, operationName: payload.operationName, variableValues: payload.variables, contextValue: prepared };
  };

  /** The stream of one subscription: registered on its route until it ends. */
  const open = (extra: Extra, plan: Plan): LiveStream => {
    const state = extra.state!;
    let chain = Promise.resolve();
    let pending = false;
    if (plan.field === 'conversationUpdated') conversationWatchers += 1;
    const stream: LiveStream = new LiveStream(() => {
      off();
      if (plan.field === 'conversationUpdated') conversationWatchers -= 1;
    });
    const off = router.on(plan.route, (signal) => {
      if (plan.source.coalesce && pending) return; // the re-read still waiting will read the latest counts
      pending = true;
      // Each subscription's events go out in signal order; the gate bounds re-reads across the process.
      chain = chain
        .then(() =>
          gate.run(async () => {
            pending = false;
            await deliver(extra, state, plan, stream, signal);
          }),
        )
        .catch((error) => log.error({ err: error, field: plan.field }, 'realtime: delivery failed'));
    });
    return stream;
  };

  useServer<Record<string, unknown>, Extra>(
    {
      schema,
      connectionInitWaitTimeout: 10_000,
      onConnect: async (ctx: Context<Record<string, unknown>, Extra>) => {
        const { socket, request } = ctx.extra;
        const handshake: Handshake = { headers: request.headers };
        const caller = await authenticate(handshake, ctx.connectionParams);
        if (!caller) {
          socket.close(CLOSE_UNAUTHORIZED, 'Unauthorized');
          return false;
        }
        const open = connections.get(caller.userId) ?? 0;
        if (open >= limits.connectionsPerUser) {
          socket.close(CLOSE_TOO_MANY_CONNECTIONS, 'Too many connections');
          return false;
        }
        connections.set(caller.userId, open + 1);
        const { credential, ...who } = caller;
        ctx.extra.state = { id: randomUUID(), caller: who, credential, handshake, params: ctx.connectionParams, checkedAt: Date.now() };
        let sockets = socketsOf.get(caller.userId);
        if (!sockets) socketsOf.set(caller.userId, (sockets = new Set()));
        sockets.add(ctx.extra);
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        if (ctx.extra.state && !(await stillSignedIn(ctx.extra, ctx.extra.state))) {
          return [refusal('The credential of this connection has ended: sign in again.', 'UNAUTHENTICATED')];
        }
        // graphql-ws has already reserved this id: the count includes the subscription being made.
        if (Object.keys(ctx.subscriptions).length > limits.subscriptionsPerSocket) {
          return [refusal(`At most ${limits.subscriptionsPerSocket} subscriptions per connection.`, 'RATE_LIMITED', 'too_many_subscriptions')];
        }
        return prepare(ctx.extra, payload);
      },
      // The plan travels as the context value: this "subscribe" opens the stream its signals feed.
      subscribe: (args: ExecutionArgs) => {
        const { extra, plan } = args.contextValue as Prepared;
        return open(extra, plan);
      },
      onClose: (ctx) => {
        const state = ctx.extra.state;
        if (!state) return;
        ctx.extra.state = undefined;
        const sockets = socketsOf.get(state.caller.userId);
        sockets?.delete(ctx.extra);
        if (sockets?.size === 0) socketsOf.delete(state.caller.userId);
        const left = (connections.get(state.caller.userId) ?? 1) - 1;
        if (left > 0) connections.set(state.caller.userId, left);
        else connections.delete(state.caller.userId);
      },
    },
    wss,
  );

  return {
    get clients() {
      return wss.clients.size;
    },
    get subscriptions() {
      return router.size;
    },
    router,
    listener,
    fields,
    async close() {
      server.off('upgrade', onUpgrade);
      for (const client of wss.clients) client.close(1001, 'Going away');
      const deadline = Date.now() + 1_000;
      while (wss.clients.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await listener.close();
    },
  };
}

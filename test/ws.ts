// Real GraphQL WebSocket clients for tests and benchmarks: graphql-ws's own client on the `ws` package, with the
// web app's cookie on the upgrade request or a bearer token in `connectionParams`, and what each subscription received.
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** How a client signs in: the session cookie (`svc_session=...`), a resource-API access token, or nothing. */
export interface WsAuth {
  cookie?: string;
  token?: string;
  /** `connectionParams.authorization` verbatim (a malformed one, say). */
  authorization?: unknown;
  /** The upgrade request's `Origin` header. */
  origin?: string;
}

/** A connected (or refused) client and how its socket ended. */
export interface WsConnection {
  client: Client;
  /** Resolves with the close code and reason once the socket closes. */
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves when the server acknowledged the connection (never when it refused it). */
  acknowledged: Promise<void>;
  dispose(): Promise<void>;
}

/** Opens a graphql-ws connection at once (not lazily), without retries. */
export function wsConnect(url: string, auth: WsAuth = {}): WsConnection {
  const headers: Record<string, string> = {};
  if (auth.cookie) headers.cookie = auth.cookie;
  if (auth.origin) headers.origin = auth.origin;
  class WithHeaders extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  }
  const authorization = auth.authorization ?? (auth.token ? `Bearer ${auth.token}` : undefined);
  let closed!: (value: { code: number; reason: string }) => void;
  let acknowledged!: () => void;
  const closedPromise = new Promise<{ code: number; reason: string }>((resolve) => (closed = resolve));
  const ackPromise = new Promise<void>((resolve) => (acknowledged = resolve));
  const client = createClient({
    url,
    webSocketImpl: WithHeaders,
    lazy: false,
    retryAttempts: 0,
    keepAlive: 0,
    connectionParams: authorization === undefined ? undefined : { authorization },
    onNonLazyError: () => undefined,
    on: {
      connected: () => acknowledged(),
      closed: (event) => {
        const e = event as { code: number; reason: string };
        closed({ code: e.code, reason: String(e.reason) });
      },
    },
  });
  return {
    client,
    closed: closedPromise,
    acknowledged: ackPromise,
    async dispose() {
      await client.dispose();
    },
  };
}

/** What one subscription received. */
export interface Received {
  /** `data` of every `next`, in order. */
  events: Array<Record<string, any>>;
  /** Every `next` payload as sent (with `errors` when there were). */
  payloads: Array<{ data?: Record<string, any> | null; errors?: ReadonlyArray<{ message: string; extensions?: Record<string, any> }> }>;
  /** The `error` the subscription ended with, if it did. */
  error: any;
  completed: boolean;
  /** Ends the subscription (a `complete` message to the server). */
  stop(): void;
}

/** Subscribes on `connection` and records what arrives. */
export function subscribe(connection: WsConnection | Client, query: string, variables: Record<string, unknown> = {}): Received {
  const client = 'client' in connection ? connection.client : connection;
  const received: Received = { events: [], payloads: [], error: null, completed: false, stop: () => undefined };
  received.stop = client.subscribe(
    { query, variables },
    {
      next: (payload) => {
        received.payloads.push(payload as Received['payloads'][number]);
        if (payload.data) received.events.push(payload.data as Record<string, any>);
      },
      error: (error) => {
        received.error = error;
      },
      complete: () => {
        received.completed = true;
      },
    },
  );
  return received;
}

import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from './database.js';

/** This process's subscription to one notification channel. */
export interface ChannelListener {
  /** Whether the LISTEN is in place now (false while a PostgreSQL connection is being re-established). */
  readonly listening: boolean;
  /** How many times the dedicated connection was re-established after it dropped. */
  readonly reconnects: number;
  /** Stops listening and releases the connection. */
  close(): Promise<void>;
}

/** Delay before the n-th attempt to re-establish the LISTEN connection: 100 ms doubling, at most 5 s. */
const backoff = (attempt: number) => Math.min(5_000, 100 * 2 ** Math.min(attempt, 6));

/**
 * Listens on `channel` and calls `onPayload` with every payload, once the LISTEN is in place (resolves then).
 * PostgreSQL: one dedicated connection outside the pool (named `svc <name> listener <pid>`), re-established with
 * backoff when it drops (a database restart); payloads sent while it was down are lost, `onReconnect` says when it is
 * back. PGlite: its in-process `listen`.
 */
export async function listenOnChannel(
  database: Database,
  options: { channel: string; name: string; log: Logger; onReconnect?: () => void },
  onPayload: (payload: string) => void,
): Promise<ChannelListener> {
  const { channel, name, log, onReconnect = () => undefined } = options;
  if (database.pglite) {
    const unlisten = await database.pglite.listen(channel, onPayload);
    let open = true;
    return {
      get listening() {
        return open;
      },
      reconnects: 0,
      async close() {
        if (!open) return;
        open = false;
        await unlisten().catch(() => undefined); // the database may already be closed
      },
    };
  }
  if (!database.pool) throw new Error(`${name}: the database has neither a pool nor PGlite`);
  const poolOptions = database.pool.options;
  let client: pg.Client | null = null;
  let listening = false;
  let closed = false;
  let reconnects = 0;
  let timer: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ ...poolOptions, application_name: `svc ${name} listener ${process.pid}` } as pg.ClientConfig);
    next.on('notification', (message) => {
      if (message.channel === channel && message.payload !== undefined) onPayload(message.payload);
    });
    next.on('error', () => lost(next)); // 'end' follows; the error itself is logged there
    next.on('end', () => lost(next));
    client = next;
    await next.connect();
    await next.query(`LISTEN ${channel}`);
    if (closed) {
      await next.end().catch(() => undefined);
      return;
    }
    listening = true;
  };

  const retry = (attempt: number) => {
    if (closed) return;
    timer = setTimeout(async () => {
      timer = undefined;
      try {
        await connect();
        reconnects += 1;
        log.info({ reconnects }, `${name}: LISTEN re-established`);
        onReconnect();
      } catch (error) {
        log.warn({ err: error, attempt }, `${name}: LISTEN connection failed, retrying`);
        client?.removeAllListeners('end');
        client?.end().catch(() => undefined);
        client = null;
        retry(attempt + 1);
      }
    }, backoff(attempt));
    timer.unref();
  };

  function lost(which: pg.Client) {
    if (which !== client) return; // an older connection, already replaced
    listening = false;
    client = null;
    which.removeAllListeners('end');
    which.removeAllListeners('error');
    which.on('error', () => undefined);
    which.end().catch(() => undefined);
    if (closed) return;
    log.warn(`${name}: LISTEN connection lost, reconnecting`);
    retry(0);
  }

  await connect();
  return {
    get listening() {
      return listening;
    },
    get reconnects() {
      return reconnects;
    },
    async close() {
      closed = true;
      listening = false;
      if (timer) clearTimeout(timer);
      const current = client;
      client = null;
      if (current) {
        current.removeAllListeners('end');
        current.on('error', () => undefined);
        await current.end().catch(() => undefined);
      }
    },
  };
}

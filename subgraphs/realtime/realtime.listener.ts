import pg from 'pg';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Database } from '../../db/src/index.js';
import { REALTIME_CHANNEL, type RealtimeSignal } from './realtime.service.js';

const id = z.string().min(1).max(100);
/** A notification's payload, parsed: anything else on the channel is dropped (and logged). */
const signalSchema = z.discriminatedUnion('topic', [
  z.object({ topic: z.literal('notification'), userId: id, notificationId: id }),
  z.object({ topic: z.literal('unread'), userId: id }),
  z.object({ topic: z.literal('message'), conversationId: id, messageId: id }),
  z.object({ topic: z.literal('conversation'), conversationId: id }),
]);

/** The signal a NOTIFY payload carries, or null when it is not one. */
export function parseSignal(payload: string): RealtimeSignal | null {
  try {
    const parsed = signalSchema.safeParse(JSON.parse(payload));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** This process's subscription to the realtime channel. */
export interface SignalListener {
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
 * Listens on the realtime channel and calls `onSignal` with every signal, once the LISTEN is in place (resolves then).
 * PostgreSQL: one dedicated connection outside the pool, re-established with backoff when it drops (a database
 * restart); signals sent while it was down are lost, so subscribers re-read on their next signal. PGlite: its
 * in-process `listen`.
 */
export async function listenForSignals(
  database: Database,
  onSignal: (signal: RealtimeSignal) => void,
  log: Logger,
  /** Called each time the LISTEN is back after it dropped: signals of the gap are lost, subscribers may refresh. */
  onReconnect: () => void = () => undefined,
): Promise<SignalListener> {
  const deliver = (payload: string) => {
    const signal = parseSignal(payload);
    if (signal) onSignal(signal);
    else log.warn({ channel: REALTIME_CHANNEL }, 'realtime: ignored a payload that is not a signal');
  };
  if (database.pglite) {
    const unlisten = await database.pglite.listen(REALTIME_CHANNEL, deliver);
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
  if (!database.pool) throw new Error('realtime: the database has neither a pool nor PGlite');
  const options = database.pool.options;
  let client: pg.Client | null = null;
  let listening = false;
  let closed = false;
  let reconnects = 0;
  let timer: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ ...options, application_name: `svc realtime listener ${process.pid}` } as pg.ClientConfig);
    next.on('notification', (message) => {
      if (message.channel === REALTIME_CHANNEL && message.payload !== undefined) deliver(message.payload);
    });
    next.on('error', () => lost(next)); // 'end' follows; the error itself is logged there
    next.on('end', () => lost(next));
    client = next;
    await next.connect();
    await next.query(`LISTEN ${REALTIME_CHANNEL}`);
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
        log.info({ reconnects }, 'realtime: LISTEN re-established');
        onReconnect();
      } catch (error) {
        log.warn({ err: error, attempt }, 'realtime: LISTEN connection failed, retrying');
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
    log.warn('realtime: LISTEN connection lost, reconnecting');
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

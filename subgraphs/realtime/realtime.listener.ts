import type { Logger } from 'pino';
import { z } from 'zod';
import { listenOnChannel, type ChannelListener, type Database } from '../../db/src/index.js';
import { REALTIME_CHANNEL, type RealtimeSignal } from './realtime.service.js';

const id = z.string().min(1).max(100);
/** A notification's payload, parsed: anything else on the channel is dropped (and logged). */
const signalSchema = z.discriminatedUnion('topic', [
  z.object({ topic: z.literal('notification'), userId: id, notificationId: id }),
  z.object({ topic: z.literal('unread'), userId: id }),
  z.object({ topic: z.literal('signedOut'), userId: id, credential: id.optional(), keep: id.optional() }),
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
export type SignalListener = ChannelListener;

/**
 * Listens on the realtime channel and calls `onSignal` with every signal, once the LISTEN is in place (resolves then).
 * PostgreSQL: one dedicated connection outside the pool, re-established with backoff when it drops (a database
 * restart); signals sent while it was down are lost, so subscribers re-read on their next signal. PGlite: its
 * in-process `listen`.
 */
export function listenForSignals(
  database: Database,
  onSignal: (signal: RealtimeSignal) => void,
  log: Logger,
  /** Called each time the LISTEN is back after it dropped: signals of the gap are lost, subscribers may refresh. */
  onReconnect: () => void = () => undefined,
): Promise<SignalListener> {
  return listenOnChannel(database, { channel: REALTIME_CHANNEL, name: 'realtime', log, onReconnect }, (payload) => {
    const signal = parseSignal(payload);
    if (signal) onSignal(signal);
    else log.warn({ channel: REALTIME_CHANNEL }, 'realtime: ignored a payload that is not a signal');
  });
}

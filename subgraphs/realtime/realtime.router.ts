import type { RealtimeSignal } from './realtime.service.js';

/** Where a signal is delivered in this process: one topic and one key (a user id or a conversation id). */
export type Route = `${RealtimeSignal['topic']}:${string}`;

/** The route of a signal: its topic and the id its subscribers wait on. */
export function routeOf(signal: RealtimeSignal): Route {
  switch (signal.topic) {
    case 'notification':
    case 'unread':
    case 'signedOut':
      return `${signal.topic}:${signal.userId}`;
    case 'message':
    case 'conversation':
      return `${signal.topic}:${signal.conversationId}`;
  }
}

/**
 * The in-process router from a route to its handlers. A handler is added by `on` and removed by the function
 * `on` returns; a route without handlers is deleted at once, so `size` counts only live subscribers and returns to
 * zero when every subscription has ended.
 */
export class SignalRouter {
  private readonly routes = new Map<string, Set<(signal: RealtimeSignal) => void>>();

  /** Calls `handler` with each signal of `route` until the returned function is called (idempotent). */
  on(route: Route, handler: (signal: RealtimeSignal) => void): () => void {
    let handlers = this.routes.get(route);
    if (!handlers) this.routes.set(route, (handlers = new Set()));
    handlers.add(handler);
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      const current = this.routes.get(route);
      if (!current) return;
      current.delete(handler);
      if (current.size === 0) this.routes.delete(route);
    };
  }

  /** Hands `signal` to every handler of its route; a throwing handler does not stop the others. */
  dispatch(signal: RealtimeSignal, route: Route = routeOf(signal)): number {
    const handlers = this.routes.get(route);
    if (!handlers) return 0;
    for (const handler of [...handlers]) {
      try {
        handler(signal);
      } catch {
        // a handler's own failure is its business (it logs); the other subscribers still hear the signal
      }
    }
    return handlers.size;
  }

  /** The keys of the routes of `topic` that have handlers now (user ids for `unread`, say). */
  keysOf(topic: RealtimeSignal['topic']): string[] {
    const prefix = `${topic}:`;
    return [...this.routes.keys()].filter((route) => route.startsWith(prefix)).map((route) => route.slice(prefix.length));
  }

  /** Whether anyone in this process listens on `route`. */
  has(route: Route): boolean {
    return this.routes.has(route);
  }

  /** Handlers registered, over every route. */
  get size(): number {
    let n = 0;
    for (const handlers of this.routes.values()) n += handlers.size;
    return n;
  }

  /** Routes with at least one handler. */
  get routeCount(): number {
    return this.routes.size;
  }
}

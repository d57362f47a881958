// Live updates, below every domain: domains announce in their write transaction that something changed (ids only,
// never content); the gateway process listens and pushes to the subscribers who may still see it.
export { publish, publishAll, REALTIME_CHANNEL } from './realtime.service.js';
export type { RealtimeSignal } from './realtime.service.js';
export { SignalRouter, routeOf } from './realtime.router.js';
export type { Route } from './realtime.router.js';
export { listenForSignals, parseSignal } from './realtime.listener.js';
export type { SignalListener } from './realtime.listener.js';

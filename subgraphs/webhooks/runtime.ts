import { Agent } from 'undici';
import type { AppConfig, AppDeps } from '../kernel/index.js';
import { AddressPolicy, type Resolver } from './ssrf.js';

/**
 * Attempts in flight at once per receiver origin (and connections kept to it). Receivers are spared a burst of
 * hundreds of parallel connections, and their TLS sessions are reused: far faster than one handshake per delivery.
 * An attempt's timeout starts when its turn comes, not while it waits.
 */
export const PER_ORIGIN_CONCURRENCY = 10;

export interface WebhookRuntimeOptions {
  /** DNS resolver used at registration and at dial time (tests inject one). Default: the system's. */
  resolve?: Resolver;
}

/** The HTTP side of outbound webhooks in one app: the address policy, the HTTP client, attempts in flight. */
export interface WebhookRuntime {
  policy: AddressPolicy;
  agent: Agent;
  /** Attempts in flight (or waiting for their turn) per endpoint, so deleting an endpoint stops its sends at once. */
  inflight: Map<string, Set<AbortController>>;
  /** Per-origin turns (PER_ORIGIN_CONCURRENCY). */
  gates: Map<string, Gate>;
  /** Aborted (and replaced) when the process stops: outcomes waiting for the database are then given up. */
  stopping: AbortController;
}

declare module '../kernel/context.js' {
  interface AppDeps {
    /** Outbound webhook delivery of this app: `createWebhookRuntime`, closed by `closeWebhooks`. */
    webhooks: WebhookRuntime;
  }
}

/** A counting semaphore whose waiters can be aborted. */
export class Gate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }

  /** Takes a turn now if one is free (and `signal` has not aborted): no promise to wait for. */
  tryEnter(signal: AbortSignal): boolean {
    if (signal.aborted || this.active >= this.limit) return false;
    this.active += 1;
    return true;
  }

  enter(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.active < this.limit) {
      this.active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener('abort', onAbort);
        this.active += 1;
        resolve();
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(go), 1);
        reject(signal.reason);
      };
      this.waiting.push(go);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  leave(): void {
    this.active -= 1;
    this.waiting.shift()?.();
  }
}

/** The webhook runtime of one app (built once, by `server/deps.ts`). */
export function createWebhookRuntime(config: AppConfig, options: WebhookRuntimeOptions = {}): WebhookRuntime {
  const policy = new AddressPolicy(config.webhooks.allowedPrivateHosts, options.resolve);
  const timeout = config.webhooks.timeoutMs;
  const agent = new Agent({
    // The lookup refuses non-public addresses at dial time, after any DNS change since registration.
    connect: { lookup: policy.connectLookup(), timeout },
    connections: PER_ORIGIN_CONCURRENCY,
    headersTimeout: timeout,
    bodyTimeout: timeout,
    keepAliveTimeout: 4_000,
  });
  return { policy, agent, inflight: new Map(), gates: new Map(), stopping: new AbortController() };
}

/** The address policy of this app (registration checks). */
export const policyOf = (app: AppDeps): AddressPolicy => app.webhooks.policy;

/**
 * Stops every attempt of this process now (the process is stopping). They are not recorded: their claims
 * lapse and a later cycle, here or in another worker, sends them again. Outcomes still waiting for the
 * database to come back are tried once more, then given up (those deliveries are sent again too).
 */
export function interruptAttempts(app: AppDeps): void {
  const rt = app.webhooks;
  for (const set of rt.inflight.values()) for (const c of set) c.abort(new ShuttingDown());
  rt.stopping.abort();
  rt.stopping = new AbortController();
}

/** Interrupts attempts in flight and closes the HTTP client (keep-alive sockets). */
export async function closeWebhooks(app: AppDeps): Promise<void> {
  interruptAttempts(app);
  await app.webhooks.agent.close();
}

/** Aborts this process's attempts to an endpoint that was just deleted. (Disabling lets attempts in flight finish.) */
export function abortEndpointAttempts(app: AppDeps, endpointId: string): void {
  const set = app.webhooks.inflight.get(endpointId);
  if (set) for (const c of set) c.abort(new EndpointGone());
}

/** Why an attempt was aborted: its endpoint was deleted. */
export class EndpointGone extends Error {
  constructor() {
    super('endpoint deleted');
    this.name = 'EndpointGone';
  }
}

/** Why an attempt was aborted: this process is stopping. */
export class ShuttingDown extends Error {
  constructor() {
    super('shutting down');
    this.name = 'ShuttingDown';
  }
}

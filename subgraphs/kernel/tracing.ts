import type { Attributes, Context, Link, Span, SpanContext, SpanKind, Tracer } from '@opentelemetry/api';

/**
 * OpenTelemetry traces of this process: off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set (`config.tracing.enabled`). Off, nothing of OpenTelemetry is loaded
 * (this module imports its types only) and every helper below is one check of `tracer`, so the hot paths pay nothing.
 * On, `startTracing` starts `@opentelemetry/sdk-node`, which reads the standard variables itself (`OTEL_SERVICE_NAME`,
 * `OTEL_TRACES_SAMPLER`, `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_BSP_*`, `OTEL_PROPAGATORS`...).
 *
 * Spans are made at our own seams rather than by auto-instrumentation (whose require hooks do not patch ESM imports
 * the same way under `tsx`, the build and Jest): the HTTP answer (`rest-facade/src/http-tracing.ts`), the gateway
 * operation (`gateway/src/direct.ts`), each subgraph fetch (`local-source.ts`, `remote-source.ts`, with W3C
 * `traceparent` sent to the subgraph processes), each SQL statement of the pool (`metrics.ts`), and the asynchronous
 * work that a request queues (outbox events, mail, video), linked to the request's trace by the `traceparent` stored
 * with the row (`currentTraceparent`, `linkTo`).
 */

type Api = typeof import('@opentelemetry/api');

let api: Api | undefined;
let tracer: Tracer | undefined;

/** What `startTracing` started: `stop` flushes the spans not yet exported and stops the exporter. */
export interface Tracing {
  enabled: boolean;
  stop(): Promise<void>;
}

/**
 * Starts tracing for this process when configured (else does nothing and loads nothing). `serviceName` is this process
 * kind's `service.name` (`svc`, `svc-web`, `svc-worker`, `svc-subgraph-<name>`), unless `OTEL_SERVICE_NAME` names one.
 * Call it once, before the database pool opens (the SQL spans wrap the pool's connections as they open).
 */
export async function startTracing(config: { tracing: { enabled: boolean; serviceName?: string } }, serviceName: string): Promise<Tracing> {
  if (!config.tracing.enabled || tracer) return { enabled: !!tracer, stop: async () => undefined };
  const [otel, sdkModule] = await Promise.all([import('@opentelemetry/api'), import('@opentelemetry/sdk-node')]);
  const { NodeSDK } = sdkModule as unknown as typeof import('@opentelemetry/sdk-node');
  // Traces only: Prometheus has the metrics (metrics.ts) and pino the logs, so no OTel metric reader or log exporter.
  const sdk = new NodeSDK({ serviceName: config.tracing.serviceName ?? serviceName, metricReaders: [], logRecordProcessors: [] });
  sdk.start();
  api = otel;
  tracer = otel.trace.getTracer('svc');
  return {
    enabled: true,
    async stop() {
      tracer = undefined;
      api = undefined;
      await sdk.shutdown().catch(() => undefined);
    },
  };
}

/** True when this process records spans. */
export const tracingOn = (): boolean => tracer !== undefined;

/** Options of a span made by `inSpan` or `startSpan`. */
export interface SpanOptions {
  kind?: 'server' | 'client' | 'internal' | 'producer' | 'consumer';
  attributes?: Attributes;
  /** Spans this one follows from (a request's trace that queued the work): stored `traceparent` values, nulls skipped. */
  links?: ReadonlyArray<string | null | undefined>;
  /** The parent: a context extracted from a request's headers (`extractContext`); default the active one. */
  parent?: unknown;
  /** Start a new trace (the work is linked to its causes, not part of them). */
  root?: boolean;
}

const KINDS: Record<NonNullable<SpanOptions['kind']>, number> = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 };

/** Starts a span (not made active): undefined when tracing is off. End it with `endSpan`. */
export function startSpan(name: string, options: SpanOptions = {}): Span | undefined {
  if (!tracer) return undefined;
  const links = options.links?.map(linkTo).filter((l): l is Link => l !== undefined);
  return tracer.startSpan(
    name,
    { kind: KINDS[options.kind ?? 'internal'] as SpanKind, attributes: options.attributes, links, root: options.root },
    (options.parent as Context | undefined) ?? api!.context.active(),
  );
}

/** Ends `span`, with status ERROR and the exception recorded when `error` is given. */
export function endSpan(span: Span | undefined, error?: unknown): void {
  if (!span) return;
  if (error !== undefined) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: 2, message: error instanceof Error ? error.message : String(error) });
  }
  span.end();
}

/** Runs `fn` with `span` as the active span (as the parent of the spans started meanwhile); `fn` alone without one. */
export function withSpan<T>(span: Span | undefined, fn: () => T): T {
  if (!span || !api) return fn();
  return api.context.with(api.trace.setSpan(api.context.active(), span), fn);
}

/**
 * Runs `fn` inside a new active span that ends when `fn` settles (an error marks it failed and is rethrown). When
 * tracing is off, `fn` runs alone (with `undefined` for the span).
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  const span = startSpan(name, options);
  if (!span) return fn(undefined);
  return withSpan(span, async () => {
    try {
      const result = await fn(span);
      endSpan(span);
      return result;
    } catch (error) {
      endSpan(span, error);
      throw error;
    }
  });
}

/**
 * The span of one SQL statement (`db.system` postgresql, `db.statement` the parameterised text, never the values), as
 * a child of the active span; undefined when tracing is off or no span is active (Agenda's polling, migrations).
 */
export function statementSpan(text: string): Span | undefined {
  if (!tracer) return undefined;
  const active = api!.context.active();
  if (!api!.trace.getSpan(active)) return undefined;
  const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  return tracer.startSpan(
    `pg.query:${operation}`,
    {
      kind: KINDS.client as SpanKind,
      attributes: {
        'db.system': 'postgresql',
        'db.system.name': 'postgresql',
        'db.operation.name': operation,
        'db.statement': text.length > 2000 ? `${text.slice(0, 2000)}...` : text,
      },
    },
    active,
  );
}

/**
 * `fn` bound to the active context when tracing is on, else `fn` itself: a pool's `connect` callback runs in the
 * context of the caller that asked, not of whoever released the connection it gets.
 */
export function bindToActive<F extends (...args: never[]) => unknown>(fn: F): F {
  return api ? api.context.bind(api.context.active(), fn) : fn;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The active span as a W3C `traceparent` (`00-<trace id>-<span id>-<flags>`), to store with work queued for later
 * (an outbox event, a mail, a video); null when tracing is off or no span is active.
 */
export function currentTraceparent(): string | null {
  if (!api) return null;
  const sc = api.trace.getSpanContext(api.context.active());
  if (!sc || !api.isSpanContextValid(sc)) return null;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A span link to a stored `traceparent` (undefined for null or a malformed one). */
export function linkTo(traceparent: string | null | undefined): Link | undefined {
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!m) return undefined;
  const context: SpanContext = { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16), isRemote: true };
  return { context };
}

/** Writes the active trace context into outgoing headers (`traceparent`, `tracestate` with the default propagator). */
export function injectTraceHeaders(set: (name: string, value: string) => void): void {
  if (!api) return;
  api.propagation.inject(api.context.active(), {}, { set: (_carrier, name, value) => set(name, value) });
}

/** The context of a request's incoming trace headers (a parent for its server span); the active one when they have none. */
export function extractContext(headers: Record<string, string | string[] | undefined>): unknown {
  if (!api) return undefined;
  return api.propagation.extract(api.context.active(), headers);
}

/** `trace_id` and `span_id` of the active span, for a log line; undefined when tracing is off or none is active. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!api) return undefined;
  const sc = api.trace.getSpanContext(api.context.active());
  return sc && api.isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : undefined;
}

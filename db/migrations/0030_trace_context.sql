-- Issue 30, traces (docs/operations.md, "How to read a trace"): work that a request queues keeps the trace context of
-- that request, as its W3C traceparent (`00-<trace id>-<span id>-<flags>`), null when tracing is off. The webhook
-- fan-out, each delivery attempt, each mail sent and each video transcoded are spans linked to it
-- (subgraphs/kernel/tracing.ts). Nullable columns without a default: adding them rewrites no table.
alter table outbox_events add column trace_context text;
-- Copied from the event at fan-out, so an attempt (and each retry) links to the request without reading the outbox.
alter table webhook_deliveries add column trace_context text;
alter table mail_outbox add column trace_context text;
alter table media_videos add column trace_context text;

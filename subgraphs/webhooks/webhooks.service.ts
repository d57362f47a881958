import { z } from 'zod';
import type { Community } from '../communities/index.js';
import {
  DomainError,
  type Page,
  type RequestContext,
  conflict,
  invalid,
  invalidField,
  isUuid,
  notFound,
  paging,
  parseInput,
  rateLimited,
  toPage,
  text,
} from '../kernel/index.js';
import { requireTribeAdmin, type TribeRef } from '../members/index.js';
import { isSubscribable, SUBSCRIBABLE_EVENTS } from '../outbox/index.js';
import { sendPing, type AttemptResult } from './attempt.js';
import { abortEndpointAttempts, policyOf } from './runtime.js';
import { generateSecret } from './signer.js';
import { BlockedError, type BlockRule } from './ssrf.js';
import * as repo from './webhooks.repository.js';
import type { WebhookDelivery, WebhookEndpoint } from './webhooks.tables.js';

export type { WebhookDelivery, WebhookEndpoint } from './webhooks.tables.js';

/** A tribe named by id or by handle (the control plane uses handles, the resource API ids). */
export type { TribeRef } from '../members/index.js';

export const DESCRIPTION_MAX = 140;
const URL_MAX = 2048;

async function endpointOf(ctx: RequestContext, community: Community, id: string): Promise<WebhookEndpoint> {
  const endpoint = isUuid(id) ? await repo.findEndpoint(ctx.app.database.db, community.id, id) : undefined;
  if (!endpoint) throw notFound('Webhook endpoint');
  return endpoint;
}

// ---- validation (spec 4.2 rules 3 to 5) ----

/** Unknown events dropped, duplicates removed; none left is `no_events` (`ping` is not subscribable). */
function parseEvents(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  const kept = [...new Set(list.filter((e): e is string => typeof e === 'string' && isSubscribable(e)))];
  if (kept.length === 0) {
    throw invalidField('no_events', 'events', `at least one of ${SUBSCRIBABLE_EVENTS.join(', ')} (unknown events are dropped)`);
  }
  return kept;
}

/**
 * The message of each rule a webhook URL can break, after `url: `. The code is `invalid_url` for all of them (one code
 * per field, as on every surface); the message tells them apart, `details.reason` says exactly what was refused.
 */
export const URL_RULES: Record<BlockRule | 'required' | 'too_long', string> = {
  required: 'required: an https:// URL of a public host',
  too_long: `at most ${URL_MAX} characters`,
  malformed: 'must be an absolute https:// URL',
  https: 'must use https',
  userinfo: 'must not contain user:password@',
  host: 'host not allowed',
  private_address: 'resolves to a private address',
  unresolvable: 'host does not resolve',
};

/** HTTPS, no user info, a public host, and every address it resolves to public; else `invalid_url`. */
async function parseUrl(ctx: RequestContext, raw: unknown): Promise<string> {
  if (typeof raw !== 'string' || raw.trim() === '') throw invalid('invalid_url', `url: ${URL_RULES.required}`, { reason: 'missing' });
  if (raw.length > URL_MAX) throw invalid('invalid_url', `url: ${URL_RULES.too_long}`, { reason: 'too long' });
  try {
    return (await policyOf(ctx.app).checkUrl(raw.trim())).href;
  } catch (error) {
    if (error instanceof BlockedError) {
      const subject = error.subject ? ` (${error.subject})` : '';
      throw invalid('invalid_url', `url: ${URL_RULES[error.rule]}${subject}`, { reason: error.reason });
    }
    throw error;
  }
}

/** `parseInput` of one field of the body, so a refusal names the field (`description: at most 140 characters`). */
const parseField = <S extends z.ZodType>(field: string, schema: S, value: unknown, code?: string): z.output<S> =>
  (parseInput(z.object({ [field]: schema }), { [field]: value }, code) as Record<string, z.output<S>>)[field];

const description = text({
  max: DESCRIPTION_MAX,
  required: 'must be a string or null',
  tooLong: `at most ${DESCRIPTION_MAX} characters`,
}).nullable();
const enabled = z.boolean({ error: 'must be true or false' });

/** Input of a new endpoint. */
export interface CreateEndpointInput {
  url?: unknown;
  events?: unknown;
  description?: unknown;
  enabled?: unknown;
}

/** Input of a partial update: only the fields present change; `events` is replaced whole. */
export type UpdateEndpointInput = CreateEndpointInput;

// ---- control plane ----

/** The tribe's webhook endpoints, oldest first, secrets included (owner and admins only). */
export async function listEndpoints(ctx: RequestContext, ref: TribeRef): Promise<WebhookEndpoint[]> {
  const { community } = await requireTribeAdmin(ctx, ref);
  return repo.listEndpoints(ctx.app.database.db, community.id);
}

/** One endpoint of the tribe, or `not_found`. */
export async function getEndpoint(ctx: RequestContext, ref: TribeRef, id: string): Promise<WebhookEndpoint> {
  const { community } = await requireTribeAdmin(ctx, ref);
  return endpointOf(ctx, community, id);
}

/** The window of the test-ping limit: any 60 seconds. */
export const TEST_PING_WINDOW_SECONDS = 60;

/**
 * Registers an endpoint with a new signing secret (`whsec_` + 32 random bytes, base64url). A tribe has at most
 * `config.webhooks.endpointsPerTribe` endpoints (`WEBHOOK_ENDPOINTS_PER_TRIBE`, 16): past it, CONFLICT
 * `webhook_endpoint_limit` with `details.limit`. Counted under the tribe's lock in the inserting transaction, so
 * concurrent creations cannot pass it.
 */
export async function createEndpoint(ctx: RequestContext, ref: TribeRef, input: CreateEndpointInput): Promise<WebhookEndpoint> {
  const { community, userId } = await requireTribeAdmin(ctx, ref);
  const events = parseEvents(input.events);
  const desc = input.description === undefined ? null : parseField('description', description, input.description, 'invalid_description');
  const on = input.enabled === undefined || input.enabled === null ? true : parseField('enabled', enabled, input.enabled);
  const url = await parseUrl(ctx, input.url);
  const max = ctx.app.config.webhooks.endpointsPerTribe;
  return ctx.app.database.db.transaction(async (tx) => {
    await repo.lockTribe(tx, community.id, 'endpoints');
    if ((await repo.countEndpoints(tx, community.id)) >= max) {
      throw new DomainError(
        'conflict',
        'webhook_endpoint_limit',
        `A tribe has at most ${max} webhook endpoints: delete one before adding another.`,
        { limit: max },
      );
    }
    const now = ctx.app.clock();
    return repo.insertEndpoint(tx, {
      communityId: community.id,
      url,
      events,
      description: desc,
      enabled: on,
      secret: generateSecret(),
      createdBy: userId,
      createdAt: now,
      updatedAt: now,
    });
  });
}

/**
 * Partial update of url, events (replaced whole), description and enabled; `empty` when none is sent.
 * The secret cannot be changed. Disabling keeps pending deliveries queued; enabling resumes them.
 */
export async function updateEndpoint(ctx: RequestContext, ref: TribeRef, id: string, input: UpdateEndpointInput): Promise<WebhookEndpoint> {
  const { community } = await requireTribeAdmin(ctx, ref);
  const endpoint = await endpointOf(ctx, community, id);
  const patch: Parameters<typeof repo.updateEndpoint>[3] = {};
  if (input.events !== undefined) patch.events = parseEvents(input.events);
  if (input.description !== undefined) patch.description = parseField('description', description, input.description, 'invalid_description');
  if (input.enabled !== undefined) patch.enabled = parseField('enabled', enabled, input.enabled);
  if (input.url !== undefined) patch.url = await parseUrl(ctx, input.url);
  if (Object.keys(patch).length === 0) {
    throw invalid('empty', 'body: send at least one of url, events, description, enabled.');
  }
  const updated = await repo.updateEndpoint(ctx.app.database.db, community.id, endpoint.id, patch, ctx.app.clock());
  if (!updated) throw notFound('Webhook endpoint'); // deleted since it was read
  return updated;
}

/** Deletes an endpoint and its deliveries; sends to it stop at once. */
export async function deleteEndpoint(ctx: RequestContext, ref: TribeRef, id: string): Promise<boolean> {
  const { community } = await requireTribeAdmin(ctx, ref);
  const deleted = isUuid(id) && (await repo.deleteEndpoint(ctx.app.database.db, community.id, id));
  if (!deleted) throw notFound('Webhook endpoint');
  abortEndpointAttempts(ctx.app, id);
  return true;
}

/** An endpoint's delivery log, newest first. */
export async function listDeliveries(
  ctx: RequestContext,
  ref: TribeRef,
  endpointId: string,
  raw: { page?: number | null; perPage?: number | null } = {},
): Promise<Page<WebhookDelivery>> {
  const { community } = await requireTribeAdmin(ctx, ref);
  const endpoint = await endpointOf(ctx, community, endpointId);
  const p = paging(raw.page, raw.perPage, 100, 25);
  return toPage(await repo.listDeliveries(ctx.app.database.db, endpoint.id, p.perPage + 1, p.offset), p);
}

/** What a test ping produced: the receiver's status and time, and the logged delivery. */
export interface PingOutcome extends AttemptResult {
  delivery: WebhookDelivery | null;
}

/**
 * Sends a `ping` now (also to a disabled endpoint) and answers with the receiver's status and time. A tribe sends at
 * most `config.webhooks.testPingsPerMinute` pings (`WEBHOOK_TEST_PINGS_PER_MINUTE`, 10) in any 60 seconds, over all its
 * endpoints: past it, RATE_LIMITED `webhook_test_rate_limited` with the seconds until one more fits, and nothing is
 * sent. The ping is counted before it is sent, under the tribe's lock, in every process.
 */
export async function testEndpoint(ctx: RequestContext, ref: TribeRef, id: string): Promise<PingOutcome> {
  const { community } = await requireTribeAdmin(ctx, ref);
  const endpoint = await endpointOf(ctx, community, id);
  await takeTestPing(ctx, community.id);
  const { delivery, result } = await sendPing(ctx.app, endpoint);
  return { ...result, delivery };
}

/** Counts one test ping of the tribe, or refuses it past the tribe's limit (see `testEndpoint`). */
async function takeTestPing(ctx: RequestContext, communityId: string): Promise<void> {
  const max = ctx.app.config.webhooks.testPingsPerMinute;
  const now = ctx.app.clock();
  await ctx.app.database.db.transaction(async (tx) => {
    await repo.lockTribe(tx, communityId, 'pings');
    const { count, oldest } = await repo.pingsSince(tx, communityId, new Date(now.getTime() - TEST_PING_WINDOW_SECONDS * 1000));
    if (count >= max) {
      const freeAt = (oldest ?? now).getTime() + TEST_PING_WINDOW_SECONDS * 1000;
      const retryAfterSeconds = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
      throw rateLimited(
        'webhook_test_rate_limited',
        `This tribe sent ${max} test pings in the last minute: wait ${retryAfterSeconds} s before testing again.`,
        retryAfterSeconds,
      );
    }
    await repo.recordPing(tx, communityId, now);
  });
}

/** Queues a new attempt cycle for a failed delivery: same id, same body, six attempts again. */
export async function resendDelivery(ctx: RequestContext, ref: TribeRef, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
  const { community } = await requireTribeAdmin(ctx, ref);
  const endpoint = await endpointOf(ctx, community, endpointId);
  const delivery = isUuid(deliveryId) ? await repo.findDelivery(ctx.app.database.db, endpoint.id, deliveryId) : undefined;
  if (!delivery) throw notFound('Delivery');
  if (delivery.status !== 'failed') throw conflict('not_failed', `Only a failed delivery can be resent; this one is ${delivery.status}.`);
  const requeued = await repo.requeueFailed(ctx.app.database.db, delivery.id, ctx.app.clock());
  if (!requeued) throw conflict('not_failed', 'The delivery changed meanwhile; reload the log.');
  return requeued;
}

/** Event names an endpoint can subscribe to. */
export const subscribableEvents = (): string[] => [...SUBSCRIBABLE_EVENTS];

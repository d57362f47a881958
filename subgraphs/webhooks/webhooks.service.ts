import { z } from 'zod';
import type { Community } from '../communities/index.js';
import {
  type Page,
  type RequestContext,
  conflict,
  invalid,
  isUuid,
  notFound,
  paging,
  parseInput,
  toPage,
  text,
} from '../kernel/index.js';
import { requireTribeAdmin, type TribeRef } from '../members/index.js';
import { isSubscribable, SUBSCRIBABLE_EVENTS } from '../outbox/index.js';
import { sendPing, type AttemptResult } from './attempt.js';
import { abortEndpointAttempts, policyOf } from './runtime.js';
import { generateSecret } from './signer.js';
import { BlockedError } from './ssrf.js';
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
    throw invalid('no_events', `No valid event left. Subscribable events: ${SUBSCRIBABLE_EVENTS.join(', ')}.`);
  }
  return kept;
}

/** HTTPS, no user info, a public host, and every address it resolves to public; else `invalid_url`. */
async function parseUrl(ctx: RequestContext, raw: unknown): Promise<string> {
  if (typeof raw !== 'string' || raw.trim() === '') throw invalid('invalid_url', 'url is required: an https:// URL of a public host.');
  if (raw.length > URL_MAX) throw invalid('invalid_url', `url must be at most ${URL_MAX} characters.`);
  try {
    return (await policyOf(ctx.app).checkUrl(raw.trim())).href;
  } catch (error) {
    if (error instanceof BlockedError) throw invalid('invalid_url', `url rejected: ${error.reason}.`, { reason: error.reason });
    throw error;
  }
}

const description = text({
  max: DESCRIPTION_MAX,
  required: 'description must be a string',
  tooLong: `description must be at most ${DESCRIPTION_MAX} characters`,
}).nullable();
const enabled = z.boolean({ error: 'enabled must be true or false' });

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

/** Registers an endpoint with a new signing secret (`whsec_` + 32 random bytes, base64url). */
export async function createEndpoint(ctx: RequestContext, ref: TribeRef, input: CreateEndpointInput): Promise<WebhookEndpoint> {
  const { community, userId } = await requireTribeAdmin(ctx, ref);
  const events = parseEvents(input.events);
  const desc = input.description === undefined ? null : parseInput(description, input.description, 'invalid_description');
  const on = input.enabled === undefined || input.enabled === null ? true : parseInput(enabled, input.enabled);
  const url = await parseUrl(ctx, input.url);
  const now = ctx.app.clock();
  return repo.insertEndpoint(ctx.app.database.db, {
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
  if (input.description !== undefined) patch.description = parseInput(description, input.description, 'invalid_description');
  if (input.enabled !== undefined) patch.enabled = parseInput(enabled, input.enabled);
  if (input.url !== undefined) patch.url = await parseUrl(ctx, input.url);
  if (Object.keys(patch).length === 0) {
    throw invalid('empty', 'Send at least one of url, events, description, enabled.');
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

/** Sends a `ping` now (also to a disabled endpoint) and answers with the receiver's status and time. */
export async function testEndpoint(ctx: RequestContext, ref: TribeRef, id: string): Promise<PingOutcome> {
  const { community } = await requireTribeAdmin(ctx, ref);
  const endpoint = await endpointOf(ctx, community, id);
  const { delivery, result } = await sendPing(ctx.app, endpoint);
  return { ...result, delivery };
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

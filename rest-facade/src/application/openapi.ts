/**
 * The Application API's OpenAPI 3.1 document: the web app's cookie routes (`/auth/*`, `/posts/{id}`, `/media`), the
 * control plane (`/communities/{handle}/api-keys`, `/communities/{handle}/webhooks`), personal API keys
 * (`/account/api-keys`) and affiliate tracking. Served at `GET /openapi/application.json` beside `/openapi.json`
 * (Platform API) and `/openapi/resource.json`; the rules of each body are schema constraints, taken from the
 * constants the services enforce. test/openapi-application.test.ts checks it with redocly and fails when the
 * Application router mounts a route this document does not describe.
 */

import { SCOPES } from '../../../subgraphs/kernel/index.js';
import { SUBSCRIBABLE_EVENTS } from '../../../subgraphs/outbox/index.js';
import { PASSWORD_LIMITS, PROFILE_LIMITS } from '../../../subgraphs/identity/index.js';
import { DESCRIPTION_MAX, URL_RULES } from '../../../subgraphs/webhooks/index.js';

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str: Schema = { type: 'string' };
const uuid: Schema = { type: 'string', format: 'uuid' };
const int: Schema = { type: 'integer' };
const bool: Schema = { type: 'boolean' };
const time: Schema = { type: 'string', format: 'date-time' };
const nullable = (s: Schema): Schema => ({ ...s, type: [s.type as string, 'null'] });
const arrayOf = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra });
const object = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({ type: 'object', required, properties });
const json = (schema: Schema) => ({ 'application/json': { schema } });
const ok = (description: string, schema: Schema) => ({ description, content: json(schema) });
const err = (description: string) => ({ description, content: json(ref('Error')) });
const body = (schema: Schema) => ({ required: true, content: json(schema) });
const path = (name: string, description: string, schema: Schema = uuid) => ({ name, in: 'path', required: true, description, schema });
const query = (name: string, description: string, schema: Schema) => ({ name, in: 'query', required: false, description, schema });

/** The errors every route can answer, besides its own. */
const COMMON = {
  '400': err('`invalid_input` (a field breaks its rule: `message` is `<field>: <rule>`), `malformed_json`, or the route\'s own codes.'),
  '415': err('`unsupported_media_type`: a write whose body is not `application/json`.'),
  '503': err('`service_unavailable`: the database is unreachable; `Retry-After` says when to retry.'),
};
/** And those of a route that needs the session cookie. */
const SIGNED_IN = {
  '401': err('`unauthorized`: no valid session (sign in first).'),
  '403': err('`forbidden`: the caller may not do this (tribe routes: owner or admin only), or `forbidden_origin`: a cookie write sent from a page of another site.'),
};

interface Op {
  tag: string;
  summary: string;
  id: string;
  description?: string;
  params?: unknown[];
  body?: unknown;
  responses: Record<string, unknown>;
  /** Needs no session. */
  open?: boolean;
}

const op = (o: Op) => ({
  tags: [o.tag],
  summary: o.summary,
  ...(o.description ? { description: o.description } : {}),
  operationId: o.id,
  ...(o.params?.length ? { parameters: o.params } : {}),
  ...(o.body ? { requestBody: o.body } : {}),
  ...(o.open ? { security: [] } : {}),
  responses: { ...COMMON, ...(o.open ? {} : SIGNED_IN), ...o.responses },
});

// ---- the rules, as schema constraints ----

const signupBody = object(
  {
    email: { type: 'string', format: 'email', maxLength: 254, description: 'A valid email address, unique in any letter case (409 `email_taken`; 400 `invalid_email`).' },
    password: {
      type: 'string',
      minLength: PASSWORD_LIMITS.min,
      maxLength: PASSWORD_LIMITS.max,
      description: `${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters (400 \`weak_password\`: \`password: ${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters\`).`,
    },
    username: {
      type: 'string',
      minLength: 3,
      maxLength: 30,
      pattern: '^[a-z0-9_]{3,30}$',
      description: '3 to 30 characters, each a lower-case letter a-z, a digit 0-9 or _; unique (400 `invalid_username`, 409 `username_taken`).',
    },
    displayName: {
      type: 'string',
      minLength: 1,
      maxLength: PROFILE_LIMITS.displayName,
      description: `1 to ${PROFILE_LIMITS.displayName} characters after trimming, with a visible character and no bidi controls (400 \`invalid_input\`).`,
    },
    inviteCode: { type: ['string', 'null'], maxLength: 64, description: 'A live invite code: the new user joins its tribe in the same transaction (400 `invalid_invite`).' },
  },
  ['email', 'password', 'username', 'displayName'],
);
const loginBody = object({ email: { type: 'string', maxLength: 254 }, password: { type: 'string', maxLength: PASSWORD_LIMITS.max } });

const keyBody = object({
  name: { type: 'string', minLength: 1, maxLength: 60, description: 'Trimmed, then cut to 60 characters; blank is 400 `invalid_name`.' },
  scopes: arrayOf({ type: 'string', enum: [...SCOPES] }, { minItems: 1, description: 'Unknown scopes are dropped; none left is 400 `no_scopes`.' }),
});

const endpointProperties = {
  url: {
    type: 'string',
    format: 'uri',
    maxLength: 2048,
    pattern: '^https://',
    description:
      'An https:// URL of a public host; every address it resolves to must be public. Each broken rule is 400 `invalid_url` with its own message: ' +
      Object.values(URL_RULES).map((rule) => `\`url: ${rule}\``).join(', ') +
      ' (what was refused follows in parentheses).',
  },
  events: arrayOf({ type: 'string', enum: [...SUBSCRIBABLE_EVENTS] }, { minItems: 1, description: 'Unknown events are dropped; none left is 400 `no_events`.' }),
  description: { type: ['string', 'null'], maxLength: DESCRIPTION_MAX, description: `At most ${DESCRIPTION_MAX} characters (400 \`invalid_description\`).` },
  enabled: { type: 'boolean', description: 'Default true.' },
};

const HANDLE = path('handle', 'The tribe\'s handle (any letter case).', { type: 'string', minLength: 1, maxLength: 64 });
const ENDPOINT_ID = path('id', 'The endpoint\'s id.');

const schemas: Record<string, Schema> = {
  Error: {
    type: 'object',
    required: ['error', 'message'],
    properties: {
      error: { type: 'string', description: 'The stable machine code: branch on it.' },
      message: { type: 'string', description: 'For people: when one field is at fault, `<field>: <rule>` (`password: 10 to 256 characters`). May change.' },
      requestId: { type: 'string', description: 'The `x-request-id` of the request.' },
    },
  },
  User: object({ id: uuid, email: str, username: str, displayName: str }),
  ApiKey: object({ id: uuid, name: str, keyPrefix: str, scopes: arrayOf(str), lastUsedAt: nullable(time), revokedAt: nullable(time), createdAt: time }),
  WebhookEndpoint: object({
    id: uuid, url: str, events: arrayOf(str), description: nullable(str), enabled: bool, secret: { type: 'string', pattern: '^whsec_' }, createdAt: time, updatedAt: time,
  }),
  Delivery: object({
    id: uuid, event: str, status: { type: 'string', enum: ['pending', 'delivered', 'failed'] }, attempts: int, responseStatus: nullable(int),
    responseTimeMs: nullable(int), lastError: nullable(str), nextAttemptAt: nullable(time), deliveredAt: nullable(time), createdAt: time,
    body: nullable(str),
  }),
};

const userAnswer = ok('The user.', object({ user: ref('User') }));
const sessionCookie = { 'Set-Cookie': { description: '`svc_session=<token>`: HttpOnly, SameSite=Lax, Secure unless `COOKIE_SECURE=false`.', schema: str } };

const paths = {
  '/auth/signup': {
    post: op({
      tag: 'Account', summary: 'Sign up', id: 'signup', open: true, body: body(signupBody),
      description: 'Creates the user and signs them in (the `svc_session` cookie). A refused sign-up writes nothing. Rules: docs/sign-up.md.',
      responses: {
        '201': { ...userAnswer, description: 'The new user; the session cookie is set.', headers: sessionCookie },
        '400': err('`invalid_input` (a field missing or too long), `invalid_email`, `weak_password`, `invalid_username`, `invalid_invite`: `message` names the field and the rule.'),
        '409': err('`email_taken` or `username_taken`.'),
      },
    }),
  },
  '/auth/login': {
    post: op({
      tag: 'Account', summary: 'Sign in', id: 'login', open: true, body: body(loginBody),
      responses: {
        '200': { ...userAnswer, headers: sessionCookie },
        '401': err('`invalid_credentials`: the email or the password is wrong (the same answer for both).'),
        '403': err('`account_suspended` (told only after the right password).'),
        '429': err('`too_many_attempts`: too many failed sign-ins for this account or address; `Retry-After` says when to retry.'),
      },
    }),
  },
  '/auth/logout': {
    post: op({
      tag: 'Account', summary: 'Sign out', id: 'logout', open: true,
      description: 'Revokes the session server-side and clears the cookie; without a session it just clears it.',
      responses: { '200': ok('Signed out.', object({ ok: { type: 'boolean', const: true } })) },
    }),
  },
  '/auth/me': {
    get: op({ tag: 'Account', summary: 'The signed-in user', id: 'me', responses: { '200': userAnswer } }),
  },
  '/account/api-keys': {
    get: op({
      tag: 'Account', summary: 'My personal API keys (resource API)', id: 'listPersonalKeys',
      responses: {
        '200': ok('The keys (never the secret), newest first, revoked ones included, and the scopes a key may have.', object({
          keys: arrayOf(ref('ApiKey')),
          availableScopes: arrayOf(object({ name: { type: 'string', enum: ['read', 'write'] }, description: str })),
        })),
      },
    }),
    post: op({
      tag: 'Account', summary: 'Create a personal API key (shown once)', id: 'createPersonalKey',
      description: 'A key for the resource API (`Authorization: Bearer svc_pk_...`) acting as the signed-in user, within its scopes: `read` (GET, HEAD), `write` (POST, PUT, PATCH, DELETE); absent or null `scopes` is both. At most 10 live keys per user.',
      body: body(object({
        name: { type: 'string', minLength: 1, maxLength: 60, description: '1 to 60 characters after trimming (else 400 `invalid_name`).' },
        scopes: { ...nullable(arrayOf({ type: 'string', enum: ['read', 'write'] }, { minItems: 1 })), description: 'One or more of `read`, `write` (else 400 `invalid_scopes`).' },
      }, ['name'])),
      responses: {
        '201': ok('The key; `key` is shown only now.', { type: 'object', required: ['ok', 'id', 'key', 'keyPrefix'], properties: { ok: bool, id: uuid, name: str, key: { type: 'string', pattern: '^svc_pk_[A-Za-z0-9_-]{43}$' }, keyPrefix: str, scopes: arrayOf(str), createdAt: time } }),
        '409': err('`personal_api_key_limit`: 10 live keys already; revoke one first.'),
      },
    }),
  },
  '/account/api-keys/{id}': {
    delete: op({
      tag: 'Account', summary: 'Revoke a personal API key', id: 'revokePersonalKey', params: [path('id', 'The key\'s id.')],
      responses: { '200': ok('Revoked.', object({ ok: bool, id: uuid, revokedAt: time })), '404': err('`not_found`.') },
    }),
  },
  '/posts/{postId}': {
    get: {
      ...op({
        tag: 'Content', summary: 'A post', id: 'getPost', params: [path('postId', 'The post\'s id.')],
        description: 'Read under the same rules as GraphQL `post(id)`, with or without a session: a published public post of a public tribe needs none.',
        responses: {
          '200': ok('The post.', object({ id: uuid, communityId: uuid, authorId: nullable(uuid), body: str, pinnedAt: nullable(time), createdAt: time })),
          '401': err('`unauthorized`: without a session, a post GraphQL does not show an anonymous caller (a private tribe\'s, members-only, draft, removed) or no such post, alike.'),
          '404': err('`not_found`: signed in, no such post, or one the caller may not read.'),
        },
      }),
      // Anonymous or signed in (an empty requirement: no credential needed).
      security: [{}, { SessionCookie: [] }],
    },
  },
  '/media': {
    post: op({
      tag: 'Content', summary: 'Upload an image or video', id: 'uploadMedia',
      description: 'A streamed `multipart/form-data` upload with the fields `kind`, `communityId` (optional) and `file` (docs/media.md). The answer\'s `Location` is the file\'s path.',
      body: { required: true, content: { 'multipart/form-data': { schema: object({ kind: str, communityId: uuid, file: { type: 'string', contentMediaType: 'application/octet-stream' } }, ['kind', 'file']) } } },
      responses: {
        '201': ok('The stored media.', { type: 'object', required: ['id', 'kind', 'url', 'path'], properties: { id: uuid, kind: str, url: str, path: str, contentType: str, size: int, status: str } }),
        '413': err('`file_too_large`.'),
        '429': err('`upload_rate_limited` or `upload_quota_exceeded`, with `Retry-After`.'),
      },
    }),
  },
  '/media/{id}/{variant}': {
    get: op({
      tag: 'Content', summary: 'A stored file (ranges, ETag)', id: 'getMedia', open: true,
      description: 'Who may fetch it follows the media\'s tribe and course (docs/media.md#who-may-fetch).',
      params: [path('id', 'The media id.'), path('variant', 'The variant name (e.g. `original`).', str)],
      responses: {
        '200': { description: 'The file.', content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
        '206': { description: 'The requested range.' },
        '304': { description: 'Not modified (`If-None-Match`).' },
        '404': err('`not_found`.'),
        '416': { description: 'Range not satisfiable.' },
      },
    }),
  },
  '/affiliate/track': {
    post: op({
      tag: 'Affiliate', summary: 'Record an affiliate link click', id: 'trackAffiliateClick', open: true,
      body: body(object({ code: str })),
      responses: {
        '200': ok('Recorded.', { type: 'object' }),
        '400': err('`invalid_code`: unknown or malformed code.'),
        '429': err('`rate_limited`: more than 30 requests from this address in a minute; `Retry-After`.'),
      },
    }),
  },
  '/communities/{handle}/api-keys': {
    get: op({
      tag: 'Platform API keys', summary: 'A tribe\'s Platform API keys', id: 'listApiKeys', params: [HANDLE],
      responses: { '200': ok('The keys (never the secret) and the scopes.', object({ keys: arrayOf(ref('ApiKey')), availableScopes: arrayOf(str) })), '404': err('`not_found`: `Community not found: no tribe with handle "..."`.') },
    }),
    post: op({
      tag: 'Platform API keys', summary: 'Create a Platform API key (shown once)', id: 'createApiKey', params: [HANDLE], body: body(keyBody),
      responses: {
        '201': ok('The key; `key` is shown only now.', object({ ok: bool, id: uuid, name: str, key: { type: 'string', pattern: '^svc_sk_' }, keyPrefix: str, scopes: arrayOf(str) })),
        '400': err('`invalid_name` (`name: required: ...`) or `no_scopes` (`scopes: at least one of ...`).'),
        '404': err('`not_found`.'),
        '409': err('`api_key_limit`: the tribe has its maximum of live keys (`API_KEYS_PER_TRIBE`, 10): revoke one first.'),
      },
    }),
  },
  '/communities/{handle}/api-keys/{id}': {
    delete: op({
      tag: 'Platform API keys', summary: 'Revoke a Platform API key', id: 'revokeApiKey', params: [HANDLE, path('id', 'The key\'s id.')],
      responses: { '200': ok('Revoked.', object({ ok: bool, id: uuid, revokedAt: time })), '404': err('`not_found`.') },
    }),
  },
  '/communities/{handle}/webhooks': {
    get: op({
      tag: 'Webhooks', summary: 'A tribe\'s webhook endpoints', id: 'listWebhooks', params: [HANDLE],
      responses: { '200': ok('The endpoints and the events one may subscribe to.', object({ webhooks: arrayOf(ref('WebhookEndpoint')), availableEvents: arrayOf(str) })), '404': err('`not_found`.') },
    }),
    post: op({
      tag: 'Webhooks', summary: 'Register a webhook endpoint', id: 'createWebhook', params: [HANDLE], body: body(object(endpointProperties, ['url', 'events'])),
      responses: {
        '201': ok('The endpoint, with its signing secret.', ref('WebhookEndpoint')),
        '400': err('`invalid_url` (its message says which rule: `url: must use https`, `url: host not allowed (...)`, `url: resolves to a private address (...)`...), `no_events`, `invalid_description`, `invalid_input`.'),
        '404': err('`not_found`.'),
        '409': err('`webhook_endpoint_limit`: the tribe has its maximum of endpoints (`WEBHOOK_ENDPOINTS_PER_TRIBE`, 16).'),
      },
    }),
  },
  '/communities/{handle}/webhooks/{id}': {
    get: op({ tag: 'Webhooks', summary: 'A webhook endpoint', id: 'getWebhook', params: [HANDLE, ENDPOINT_ID], responses: { '200': ok('The endpoint.', ref('WebhookEndpoint')), '404': err('`not_found`.') } }),
    patch: op({
      tag: 'Webhooks', summary: 'Update a webhook endpoint (only the fields sent)', id: 'updateWebhook', params: [HANDLE, ENDPOINT_ID],
      body: body({ type: 'object', minProperties: 1, properties: endpointProperties }),
      responses: { '200': ok('The endpoint.', ref('WebhookEndpoint')), '400': err('`empty` (`body: send at least one of ...`) or a field\'s rule, as on create.'), '404': err('`not_found`.') },
    }),
    delete: op({ tag: 'Webhooks', summary: 'Delete a webhook endpoint and its log', id: 'deleteWebhook', params: [HANDLE, ENDPOINT_ID], responses: { '200': ok('Deleted.', object({ ok: bool })), '404': err('`not_found`.') } }),
  },
  '/communities/{handle}/webhooks/{id}/test': {
    post: op({
      tag: 'Webhooks', summary: 'Send a signed test ping now', id: 'testWebhook', params: [HANDLE, ENDPOINT_ID],
      responses: {
        '200': ok('What the receiver answered.', object({ ok: bool, statusCode: nullable(int), responseTimeMs: nullable(int), error: nullable(str), delivery: { type: ['object', 'null'] } })),
        '404': err('`not_found`.'),
        '429': err('`rate_limited`: too many test pings for this endpoint; `Retry-After`.'),
      },
    }),
  },
  '/communities/{handle}/webhooks/{id}/deliveries': {
    get: op({
      tag: 'Webhooks', summary: 'An endpoint\'s delivery log, newest first', id: 'listDeliveries',
      params: [HANDLE, ENDPOINT_ID, query('page', 'From 1.', { type: 'integer', minimum: 1 }), query('perPage', 'Default 25, at most 100.', { type: 'integer', minimum: 1, maximum: 100 })],
      responses: { '200': ok('A page of deliveries.', object({ deliveries: arrayOf(ref('Delivery')), page: int, perPage: int, hasMore: bool })), '404': err('`not_found`.') },
    }),
  },
  '/communities/{handle}/webhooks/{id}/deliveries/{deliveryId}/resend': {
    post: op({
      tag: 'Webhooks', summary: 'Queue a failed delivery again', id: 'resendDelivery', params: [HANDLE, ENDPOINT_ID, path('deliveryId', 'The delivery\'s id.')],
      responses: { '202': ok('Queued.', object({ delivery: ref('Delivery') })), '404': err('`not_found`.'), '409': err('`not_failed`: only a failed delivery can be resent.') },
    }),
  },
  '/webhooks/identity': {
    post: {
      tags: ['Inbound webhooks'],
      summary: 'The identity provider\'s webhook (Standard Webhooks / Svix signatures)',
      description:
        'Not for clients: the identity provider calls it when one of its users is created, changed or deleted (`user.created` provisions or links an ' +
        'account, `user.updated` changes its address, name and avatar, `user.deleted` deletes it: credentials revoked at once, personal data erased, ' +
        'content kept under "Deleted user"; other types are acknowledged and ignored). No session: the signature is the authentication, base64 ' +
        'HMAC-SHA256 keyed with the decoded `IDP_WEBHOOK_SECRET` over `<id>.<timestamp>.<raw body>`, the timestamp within 300 seconds either way. ' +
        'The `svix-id`, `svix-timestamp` and `svix-signature` names are read when `webhook-signature` is absent. Idempotent on the message id: a ' +
        'message seen before changes nothing and answers 200 again. See docs/identity-webhooks.md.',
      operationId: 'receiveIdentityWebhook',
      security: [],
      parameters: [
        { name: 'webhook-id', in: 'header', required: true, description: 'The message id: 1 to 255 printable characters.', schema: { type: 'string', minLength: 1, maxLength: 255 } },
        { name: 'webhook-timestamp', in: 'header', required: true, description: 'Unix seconds, within 300 seconds of the server\'s clock.', schema: { type: 'string', pattern: '^[0-9]{1,12}$' } },
        { name: 'webhook-signature', in: 'header', required: true, description: 'Space-separated `v1,<base64>` signatures (one must match; other versions are ignored).', schema: str },
      ],
      requestBody: {
        required: true,
        content: json(
          object(
            {
              type: { type: 'string', minLength: 1, maxLength: 255, description: '`user.created`, `user.updated`, `user.deleted`; any other is acknowledged and ignored.' },
              data: { type: 'object', description: 'The user (Clerk\'s user object, or OpenID Connect claim names): `id` (required for user events, 1 to 255 characters), the address, name, username and avatar.' },
            },
            ['type', 'data'],
          ),
        ),
      },
      responses: {
        '200': ok('Processed, ignored (another event type, or a user not linked here), or seen before.', object({ received: { type: 'boolean', const: true } })),
        '400': err('`invalid_signature` (missing headers, a timestamp outside 300 seconds, no matching signature: `message` says which) or `invalid_payload` (not an event, no `data.id`, `user.created` without an address).'),
        '409': err('`email_taken`: another account here has the address and cannot be linked.'),
        '413': err('`payload_too_large`: a body over `BODY_LIMIT_BYTES`.'),
        '503': err('`identity_webhooks_not_configured`: `IDP_WEBHOOK_SECRET` is not set; or `service_unavailable`.'),
      },
    },
  },
};

const DESCRIPTION = `The Application API: the web app's own REST routes, signed in with the \`svc_session\` cookie that
\`POST /auth/signup\` and \`POST /auth/login\` set (or the identity provider's \`__session\` cookie), and the control plane
of a tribe's Platform API keys and webhook endpoints (owner or admin). A cookie-authenticated write must be JSON
(\`multipart/form-data\` for \`POST /media\`) and must not come from a page of another site (403 \`forbidden_origin\`).
App developers who want tokens use the resource API; integrators reading a tribe use the Platform API: both are the
other documents on this page.

## Errors
Every error is flat: \`{"error": "<code>", "message": "...", "requestId": "..."}\`. Branch on \`error\`; \`message\` is for
people and, when one field is at fault, reads \`<field>: <rule>\` (\`password: 10 to 256 characters\`,
\`url: resolves to a private address (10.0.0.7: private)\`). \`requestId\` is the \`x-request-id\` header of the answer.`;

/** The document (OpenAPI 3.1). */
export const APPLICATION_OPENAPI = {
  openapi: '3.1.0',
  info: { title: 'Tribes Application API', version: '1.0.0', description: DESCRIPTION, license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
  servers: [{ url: '/', description: 'This service' }],
  security: [{ SessionCookie: [] }],
  tags: [
    { name: 'Account', description: 'Sign-up, sign-in, the session, personal API keys.' },
    { name: 'Content', description: 'Posts and media of the web app.' },
    { name: 'Affiliate', description: 'Affiliate link clicks.' },
    { name: 'Platform API keys', description: 'A tribe\'s Platform API keys (owner or admin).' },
    { name: 'Webhooks', description: 'A tribe\'s webhook endpoints and their delivery log (owner or admin).' },
    { name: 'Inbound webhooks', description: 'Called by providers, not clients: the identity provider\'s webhook (the payment provider\'s is in docs/events-and-payments.md).' },
  ],
  paths,
  components: {
    securitySchemes: {
      SessionCookie: { type: 'apiKey', in: 'cookie', name: 'svc_session', description: 'The session cookie set by `POST /auth/signup` and `POST /auth/login`.' },
    },
    schemas,
  },
} as const;

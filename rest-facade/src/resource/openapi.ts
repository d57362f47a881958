/**
 * The resource API's OpenAPI 3.1 document (spec 4.5), served at `GET /openapi/resource.json` and shown on `/docs`
 * beside the Platform API's `/openapi.json`. It describes every route `resourceRouter` mounts (`/v1/auth/*`,
 * `/v1/communities/*`) and the resource-API media routes (`/v1/media`); test/openapi-resource.test.ts walks the
 * routers' stacks and fails when a route is mounted but not described here, or described but not mounted.
 */

import { METADATA_KEY, METADATA_LIMITS } from '../../../subgraphs/communities/index.js';
import { SUBSCRIBABLE_EVENTS } from '../../../subgraphs/outbox/index.js';

type Schema = Record<string, unknown>;
type Operation = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str: Schema = { type: 'string' };
const uuid: Schema = { type: 'string', format: 'uuid' };
const int: Schema = { type: 'integer' };
const num: Schema = { type: 'number' };
const bool: Schema = { type: 'boolean' };
const time: Schema = { type: 'string', format: 'date-time' };
const nullable = (s: Schema): Schema => ({ ...s, type: [s.type as string, 'null'] });
/** A record or null, inline (a `oneOf` with null renders as a composition picker that axe finds without a name). */
const orNull = (s: Schema): Schema => ({ ...s, type: ['object', 'null'] });
const arrayOf = (items: Schema): Schema => ({ type: 'array', items });
const object = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({ type: 'object', required, properties });
const ACCESS = ['free', 'paid', 'members_only'];

const json = (schema: Schema) => ({ 'application/json': { schema } });
/** `{data: <record>}`. */
const one = (description: string, name: string) => ({ description, content: json(object({ data: ref(name) })) });
/** `{data: [...], pagination}`. */
const list = (description: string, name: string) => ({
  description,
  content: json(object({ data: arrayOf(ref(name)), pagination: ref('Pagination') })),
});
const noContent = { description: 'Done; no body.' };
const err = (description: string) => ({ description, content: json(ref('Error')) });

/** The errors every signed-in route can answer, besides its own. */
const COMMON_ERRORS = {
  '400': err('Invalid input (`invalid_input`, naming the field in `details`), query (`invalid_query`) or JSON (`malformed_json`).'),
  '401': err('`unauthorized`: no valid access token or personal API key (revoked, or its user suspended or deleted).'),
  '403': err('`forbidden`: the caller\'s role in the tribe does not allow it; `insufficient_scope`: a personal API key without the scope of the method (`read`: GET, HEAD; `write`: POST, PUT, PATCH, DELETE), named in `details.required_scope`.'),
  '404': err('`not_found`: no such tribe or resource (or one the caller may not see). For a tribe the message says what was looked up: `Community not found: no tribe with id "..."` or `... with handle "..."`.'),
  '415': err('`unsupported_media_type`: a body that is not `application/json`.'),
  '503': err('`service_unavailable`: the database is unreachable; `Retry-After` says when to retry.'),
};

const param = (name: string, description: string, schema: Schema = uuid) => ({ name, in: 'path', required: true, description, schema });
const query = (name: string, description: string, schema: Schema = str) => ({ name, in: 'query', required: false, description, schema });
/** A tribe in a path: its id or its handle (the control plane and the console name tribes by handle). */
const CID = param(
  'community_id',
  'The tribe: its id, or its handle in any letter case (`/v1/communities/my-tribe/posts` is the same as `/v1/communities/<its id>/posts`). ' +
    'An unknown one is 404 `not_found` whose message says what was looked up: `Community not found: no tribe with handle "my-tribe".`',
  { type: 'string', minLength: 1, examples: ['3f2c9a4e-5b1d-4c8e-9f7a-2d6b8e1c0a53', 'my-tribe'] },
);
const PAGE = [
  query('page', 'Page number, from 1 (default 1).', { type: 'integer', minimum: 1 }),
  query('per_page', 'Items a page (default 20, at most 50).', { type: 'integer', minimum: 1, maximum: 50 }),
];

const body = (schema: Schema, required = true) => ({ required, content: json(schema) });

interface Op {
  tag: string;
  summary: string;
  id: string;
  params?: unknown[];
  body?: unknown;
  responses: Record<string, unknown>;
  /** Without the Bearer token (login, refresh). */
  open?: boolean;
  description?: string;
}

const op = (o: Op): Operation => ({
  tags: [o.tag],
  summary: o.summary,
  ...(o.description ? { description: o.description } : {}),
  operationId: o.id,
  ...(o.params?.length ? { parameters: o.params } : {}),
  ...(o.body ? { requestBody: o.body } : {}),
  ...(o.open ? { security: [] } : {}),
  responses: o.open
    ? { ...o.responses, '400': COMMON_ERRORS['400'], '415': COMMON_ERRORS['415'], '503': COMMON_ERRORS['503'] }
    : { ...o.responses, ...COMMON_ERRORS },
});

// ---- records (snake_case, spec 2.6) ----

const person = object({ id: uuid, username: str, display_name: str });
const pendingOrder = object({
  status: { const: 'pending_payment' },
  order: object({
    id: uuid,
    amount: num,
    amount_cents: int,
    currency: str,
    status: str,
    checkout: { type: ['object', 'null'], description: 'Where to pay: `provider`, `url` (absent fields left out).', properties: { provider: str, url: str } },
  }),
});
const viewerEnrollment = { type: ['object', 'null'], properties: { id: uuid, status: str }, required: ['id', 'status'] };
const video = object({
  media_id: uuid,
  status: { type: 'string', enum: ['processing', 'ready', 'failed'] },
  hls_url: nullable(str),
  poster_url: nullable(str),
  duration_seconds: nullable(num),
  failure_reason: nullable(str),
});
const lesson = object(
  { id: uuid, course_id: uuid, module_id: uuid, title: str, content: nullable(str), position: int, created_at: time, video },
  ['id', 'course_id', 'module_id', 'title', 'content', 'position', 'created_at'],
);
const courseModule = object(
  { id: uuid, course_id: uuid, title: str, position: int, created_at: time, lessons: arrayOf(ref('Lesson')) },
  ['id', 'course_id', 'title', 'position', 'created_at'],
);
const course = object(
  {
    id: uuid, community_id: uuid, title: str, description: nullable(str), access_type: { type: 'string', enum: ACCESS },
    price: { type: 'number', description: 'In major units (49.9); 0 when free.' }, currency: str, xp_reward: int,
    created_by: nullable(uuid), created_at: time, updated_at: time,
    modules: { ...arrayOf(ref('CourseModule')), description: 'On a single course only, with their lessons.' },
    viewer_enrollment: { ...viewerEnrollment, description: 'On a single course only.' },
  },
  ['id', 'community_id', 'title', 'description', 'access_type', 'price', 'currency', 'xp_reward', 'created_by', 'created_at', 'updated_at'],
);
const challenge = object(
  {
    id: uuid, community_id: uuid, title: str, description: nullable(str), duration_days: int,
    challenge_type: { type: 'string', enum: ['daily', 'weekly', 'custom'] }, access_type: { type: 'string', enum: ACCESS },
    price: num, currency: str, xp_reward: int, created_by: nullable(uuid), created_at: time, updated_at: time,
    viewer_enrollment: { ...viewerEnrollment, description: 'On a single challenge only.' },
  },
  ['id', 'community_id', 'title', 'description', 'duration_days', 'challenge_type', 'access_type', 'price', 'currency', 'xp_reward', 'created_by', 'created_at', 'updated_at'],
);
const challengeProgress = object({
  challenge_id: uuid, enrollment_id: uuid, status: str, total_days: int, completed_days: int, progress_percent: num,
  current_streak: int, last_checkin_at: nullable(time), current_day: nullable(int), xp_earned: int,
});
const registration = object({
  id: uuid, event_id: uuid, user_id: uuid, status: str, ticket_code: nullable(str), order_id: nullable(uuid), created_at: time, checked_in_at: nullable(time),
});

const communityFields: Record<string, Schema> = {
  id: uuid, name: str, handle: str, description: nullable(str), member_count: int, is_public: bool, category: nullable(str),
  viewer_role: { type: ['string', 'null'], description: 'The caller\'s role, or null when not a member.' }, created_at: time, updated_at: time,
};
/** `metadata` (rules: subgraphs/communities/communities.metadata.ts). */
const metadataSchema: Schema & { description: string } = {
  type: 'object',
  maxProperties: METADATA_LIMITS.keys,
  propertyNames: { pattern: METADATA_KEY.source },
  description: `Free-form data for integrations, set by the owner or admins and visible to whoever can see the tribe (never store a secret). A JSON object (\`{}\` when none): at most ${METADATA_LIMITS.keys} keys, keys 1 to ${METADATA_LIMITS.keyChars} of \`A-Z a-z 0-9 _ . : -\` at every level, nesting at most ${METADATA_LIMITS.depth} levels (the object itself is level 1), at most ${METADATA_LIMITS.bytes} bytes serialised as JSON. It is replaced whole (\`{}\` clears it). Anything else is 400 \`invalid_input\` naming the field (\`metadata\` or \`metadata.<key path>\`) and the rule in \`message\` and \`details\`; nothing changes.`,
};

/** `content`, the first name of a post's or comment's text: still accepted and answered, deprecated for `body` (issue 31). */
const deprecatedContent = (what: string): Schema => ({
  type: 'string',
  deprecated: true,
  description: `Deprecated: use \`body\`, the text's one name on every surface (GraphQL, the Platform API, the Application API). ${what}`,
});
/** A body with the text: `body`, or its deprecated name `content` (not both: 400 \`invalid_input\` naming \`body\`). */
const withText = (schema: Schema, required: boolean): Schema => (required ? { ...schema, anyOf: [{ required: ['body'] }, { required: ['content'] }] } : schema);

const tokens = {
  access_token: { type: 'string', description: 'JWT; send as `Authorization: Bearer <token>`.' },
  refresh_token: { type: 'string', description: 'Single use.' },
  expires_in: { type: 'integer', description: 'Seconds (3600).' },
};

const schemas: Record<string, Schema> = {
  Error: {
    ...object({
      error: object(
        { code: { type: 'string', description: 'Machine code: branch on it.' }, message: { type: 'string', description: 'Human text; may change.' }, details: { description: 'Per-field problems (`[{field, message}]`) or other detail.' }, request_id: { type: 'string', description: 'The request id, as the `x-request-id` response header: quote it when reporting a problem.' } },
        ['code', 'message', 'request_id'],
      ),
    }),
    description: 'The resource API error envelope.',
  },
  Pagination: object({ page: int, per_page: int, has_more: bool }),
  User: object({ id: uuid, email: { type: 'string', format: 'email' }, username: str, display_name: str, avatar_url: nullable(str) }),
  Tokens: object(tokens),
  Login: object({ ...tokens, user: object({ id: uuid, email: str, username: str }) }),
  Community: object(communityFields),
  CommunityFull: {
    ...object({
      ...communityFields,
      settings: {
        ...object({
          visibility: { type: 'string', enum: ['public', 'private'], description: 'Set with `is_public`.' },
          join_policy: { type: 'string', enum: ['open', 'invite_only'], description: '`open` for a public tribe; `invite_only` for a private one (joining needs an invite code). Follows `visibility`.' },
          default_post_visibility: { type: 'string', enum: ['public'], description: 'What a post created without `visibility` gets (fixed).' },
          moderation: {
            type: ['object', 'null'],
            description: 'The automod settings (GraphQL `updateModerationSettings` changes them); null unless the caller is a moderator, admin or owner of the tribe.',
            required: ['require_approval', 'new_member_post_limit', 'blocked_words', 'blocked_domains'],
            properties: { require_approval: bool, new_member_post_limit: int, blocked_words: arrayOf(str), blocked_domains: arrayOf(str) },
          },
        }),
        description: 'The tribe\'s own switches: read-only here, each changed where its description says.',
      },
      metadata: { ...metadataSchema, description: `${metadataSchema.description} Set it with \`metadata\` on create or update.` },
    }),
    description: 'The full community object (spec 2.6): what a single tribe, a created one and an updated one answer. Lists answer `Community`.',
  },
  Member: object({ id: uuid, user_id: uuid, username: str, display_name: str, role: { type: 'string', enum: ['owner', 'admin', 'moderator', 'member'] }, joined_at: time, xp: int, level: int }),
  Author: person,
  Post: object({
    id: uuid, community_id: uuid, author_id: nullable(uuid), author: orNull(person), body: { type: 'string', description: 'The text, sanitized HTML.' },
    content: deprecatedContent('The same text as `body`.'),
    media_urls: arrayOf(str), is_pinned: bool, pinned_at: nullable(time), visibility: str, status: str, published_at: nullable(time), created_at: time, updated_at: time,
  }),
  Comment: object({
    id: uuid, post_id: uuid, author_id: nullable(uuid), author: orNull(person), parent_id: nullable(uuid), body: { type: 'string', description: 'The text, sanitized HTML.' },
    content: deprecatedContent('The same text as `body`.'), created_at: time,
  }),
  Course: course,
  CourseModule: courseModule,
  Lesson: lesson,
  CourseEnrollment: object({ id: uuid, course_id: uuid, user_id: uuid, status: str, enrolled_at: time, completed_at: nullable(time), last_accessed_at: nullable(time) }),
  CourseProgress: object({
    course_id: uuid, enrollment_id: uuid, status: str, total_lessons: int, completed_lessons: int,
    progress_percent: { type: 'number', minimum: 0, maximum: 100 }, last_accessed_at: nullable(time), completed_lesson_ids: arrayOf(uuid),
  }),
  Challenge: challenge,
  ChallengeEnrollment: object({ id: uuid, challenge_id: uuid, user_id: uuid, status: str, started_at: time, completed_at: nullable(time) }),
  ChallengeProgress: challengeProgress,
  Checkin: object({
    id: uuid, challenge_id: uuid, user_id: uuid, day_number: int, content: str, tags: arrayOf(str), xp_awarded: int, created_at: time, progress: ref('ChallengeProgress'),
  }),
  LeaderboardEntry: object({ rank: int, user_id: uuid, username: str, display_name: str, completed_days: int, current_streak: int, xp_earned: int, last_checkin_at: nullable(time) }),
  Event: object({
    id: uuid, community_id: uuid, title: str, description: nullable(str), event_type: { type: 'string', enum: ['online', 'in_person'] }, location: nullable(str),
    starts_at: time, ends_at: time, max_attendees: nullable(int), price: num, currency: str, registered_count: int, spots_left: nullable(int),
    created_by: nullable(uuid), created_at: time, updated_at: time, viewer_registration: orNull(registration),
  }),
  Registration: registration,
  PendingOrder: { ...pendingOrder, description: 'A paid course, challenge or event not paid yet: pay the order, then enroll or register again.' },
  Webhook: object({ id: uuid, community_id: uuid, url: str, events: arrayOf(str), description: nullable(str), is_active: bool, secret: str, created_at: time, updated_at: time }),
  WebhookLog: object({
    id: uuid, event: str, status_code: nullable(int), response_time_ms: nullable(int), created_at: time,
    status: str, attempts: int, last_error: nullable(str), next_attempt_at: nullable(time), delivered_at: nullable(time),
  }),
  WebhookTest: object({ success: bool, status_code: nullable(int), response_time_ms: nullable(int), error: nullable(str), delivery_id: nullable(uuid) }),
  Media: object(
    {
      id: uuid, kind: str, url: str, path: str, thumbnailUrl: nullable(str), contentType: str, size: int, width: nullable(int), height: nullable(int),
      communityId: nullable(uuid), status: str, createdAt: time,
      variants: arrayOf(object({ name: str, contentType: str, size: int, width: nullable(int), height: nullable(int) })),
    },
  ),
};

// ---- request bodies ----

const communityInput = (required: string[]) => object(
  { name: str, handle: { type: 'string', description: 'Unique, URL-friendly.' }, description: str, is_public: bool, category: str, metadata: metadataSchema },
  required,
);
const postInput = (required: boolean) => withText(object(
  {
    body: { type: 'string', description: 'The text, HTML (anything that could run script is removed).' },
    content: deprecatedContent('Accepted in place of `body`; sending both is 400 `invalid_input`.'),
    media_urls: arrayOf(str), is_pinned: bool, visibility: str, status: str,
  },
  [],
), required);
const webhookInput = (required: string[]) => object(
  {
    url: { type: 'string', description: 'HTTPS, a public host.' },
    events: {
      ...arrayOf(str),
      description: `Event names to receive: ${SUBSCRIBABLE_EVENTS.map((e) => `\`${e}\``).join(', ')} (docs/webhooks.md says what each carries; \`payment.completed\` is the payment received, \`order.paid\` the order paid and its item granted). Unknown names are dropped and duplicates removed; none left is 400 \`no_events\`.`,
    },
    description: { type: 'string', maxLength: 140 },
    is_active: { type: 'boolean', default: true },
  },
  required,
);
/** The registration example (spec 6.1 shows `payment.completed` in it); test/payment-completed.test.ts sends it as written. */
export const WEBHOOK_EXAMPLE = { url: 'https://example.com/webhooks/tribe', events: ['payment.completed', 'member.joined'], description: 'Billing and CRM' };

// ---- paths ----

const accessAnswers = (record: string, what: string) => ({
  '200': one(`Already ${what}: the existing record.`, record),
  '201': one(`${what[0]!.toUpperCase()}${what.slice(1)}: the new record.`, record),
  '202': { description: 'A paid item not paid yet: the pending order.', content: json(object({ data: ref('PendingOrder') })) },
});

const paths: Record<string, Record<string, Operation>> = {
  '/v1/auth/login': {
    post: op({
      tag: 'Auth', summary: 'Sign in: access and refresh tokens', id: 'login', open: true,
      body: body(object({ email: str, password: str })),
      responses: {
        '200': one('Tokens and the user.', 'Login'),
        '401': err('`invalid_credentials`: wrong email or password (`account_suspended`: a suspended account).'),
        '429': {
          ...err('`too_many_attempts`: by default, 5 failed sign-ins on this account from this address, or 50 from this address on any accounts, in 15 minutes (an address that failed on an account once is refused on it after 20 failures on that account from all addresses); `details.retryAfterSeconds` as `Retry-After`. Another address is not refused.'),
          headers: { 'Retry-After': { description: 'Seconds until this address may try again.', schema: { type: 'integer', minimum: 1 } } },
        },
      },
    }),
  },
  '/v1/auth/refresh': {
    post: op({
      tag: 'Auth', summary: 'New tokens for a refresh token (single use)', id: 'refresh', open: true,
      body: body(object({ refresh_token: str })),
      responses: { '200': one('New tokens; the refresh token sent is spent.', 'Tokens'), '401': err('`invalid_refresh_token`: unknown, expired or already used.') },
    }),
  },
  '/v1/auth/me': { get: op({ tag: 'Auth', summary: 'The signed-in user', id: 'me', responses: { '200': one('The user.', 'User') } }) },
  '/v1/communities': {
    get: op({ tag: 'Communities', summary: 'List tribes', id: 'listCommunities', params: [query('search', 'Filter by name (at most 100 characters).'), ...PAGE], responses: { '200': list('A page of tribes.', 'Community') } }),
    post: op({ tag: 'Communities', summary: 'Create a tribe (the caller becomes its owner)', id: 'createCommunity', body: body(communityInput(['name', 'handle'])), responses: { '201': one('The new tribe.', 'CommunityFull'), '409': err('The handle is taken.') } }),
  },
  '/v1/communities/{community_id}': {
    get: op({ tag: 'Communities', summary: 'A tribe (the full object, with settings and metadata)', id: 'getCommunity', params: [CID], responses: { '200': one('The tribe.', 'CommunityFull') } }),
    patch: op({
      tag: 'Communities', summary: 'Update a tribe (only the fields sent; owner or admin)', id: 'updateCommunity', params: [CID], body: body(communityInput([])),
      responses: { '200': one('The tribe.', 'CommunityFull'), '409': err('The handle is taken.') },
    }),
    delete: op({ tag: 'Communities', summary: 'Delete a tribe (irreversible)', id: 'deleteCommunity', params: [CID], responses: { '204': noContent } }),
  },
  '/v1/communities/{community_id}/members': {
    get: op({
      tag: 'Members', summary: 'List members', id: 'listMembers',
      params: [CID, query('role', 'Only this role.', { type: 'string', enum: ['owner', 'admin', 'moderator', 'member'] }), query('search', 'Display name or username.'), ...PAGE],
      responses: { '200': list('A page of members.', 'Member') },
    }),
  },
  '/v1/communities/{community_id}/members/{user_id}': {
    get: op({ tag: 'Members', summary: 'A member', id: 'getMember', params: [CID, param('user_id', 'The member\'s user id.')], responses: { '200': one('The member.', 'Member') } }),
    patch: op({
      tag: 'Members', summary: 'Change a member\'s role (owner or admin)', id: 'updateMemberRole', params: [CID, param('user_id', 'The member\'s user id.')],
      body: body(object({ role: { type: 'string', enum: ['admin', 'moderator', 'member'] } })), responses: { '200': one('The member.', 'Member') },
    }),
    delete: op({ tag: 'Members', summary: 'Remove a member', id: 'removeMember', params: [CID, param('user_id', 'The member\'s user id.')], responses: { '204': noContent } }),
  },
  '/v1/communities/{community_id}/posts': {
    get: op({
      tag: 'Posts', summary: 'List posts', id: 'listPosts',
      params: [CID, query('pinned', 'Only pinned (true) or unpinned (false) posts.', bool), query('author_id', 'Only this author\'s posts.', uuid), ...PAGE],
      responses: { '200': list('A page of posts.', 'Post') },
    }),
    post: op({ tag: 'Posts', summary: 'Create a post', id: 'createPost', params: [CID], body: body(postInput(true)), responses: { '201': one('The new post.', 'Post') } }),
  },
  '/v1/communities/{community_id}/posts/{post_id}': {
    get: op({ tag: 'Posts', summary: 'A post', id: 'getPost', params: [CID, param('post_id', 'The post\'s id.')], responses: { '200': one('The post.', 'Post') } }),
    patch: op({ tag: 'Posts', summary: 'Update a post', id: 'updatePost', params: [CID, param('post_id', 'The post\'s id.')], body: body(postInput(false)), responses: { '200': one('The post.', 'Post') } }),
    delete: op({ tag: 'Posts', summary: 'Delete a post and its comments', id: 'deletePost', params: [CID, param('post_id', 'The post\'s id.')], responses: { '204': noContent } }),
  },
  '/v1/communities/{community_id}/posts/{post_id}/comments': {
    get: op({ tag: 'Posts', summary: 'List a post\'s comments', id: 'listComments', params: [CID, param('post_id', 'The post\'s id.'), ...PAGE], responses: { '200': list('A page of comments.', 'Comment') } }),
    post: op({
      tag: 'Posts', summary: 'Comment on a post', id: 'createComment', params: [CID, param('post_id', 'The post\'s id.')],
      body: body(withText(object({
        body: { type: 'string', description: 'The text, HTML.' },
        content: deprecatedContent('Accepted in place of `body`; sending both is 400 `invalid_input`.'),
        parent_id: { ...nullable(uuid), description: 'The comment answered; null or absent: top level.' },
      }, []), true)),
      responses: { '201': one('The new comment.', 'Comment') },
    }),
  },
  '/v1/communities/{community_id}/courses': {
    get: op({ tag: 'Courses', summary: 'List courses', id: 'listCourses', params: [CID, ...PAGE], responses: { '200': list('A page of courses.', 'Course') } }),
    post: op({
      tag: 'Courses', summary: 'Create a course', id: 'createCourse', params: [CID],
      body: body(object({ title: str, description: str, access_type: { type: 'string', enum: ACCESS }, price: { type: 'number', description: 'Required when paid; major units.' }, currency: { type: 'string', description: 'ISO 4217, default BRL.' }, xp_reward: int }, ['title', 'access_type'])),
      responses: { '201': one('The new course.', 'Course') },
    }),
  },
  '/v1/communities/{community_id}/courses/{course_id}': {
    get: op({ tag: 'Courses', summary: 'A course with its modules and lessons', id: 'getCourse', params: [CID, param('course_id', 'The course\'s id.')], responses: { '200': one('The course.', 'Course') } }),
  },
  '/v1/communities/{community_id}/courses/{course_id}/modules': {
    post: op({
      tag: 'Courses', summary: 'Add a module to a course', id: 'addCourseModule', params: [CID, param('course_id', 'The course\'s id.')],
      body: body(object({ title: str, position: int }, ['title'])), responses: { '201': one('The new module.', 'CourseModule') },
    }),
  },
  '/v1/communities/{community_id}/courses/{course_id}/modules/{module_id}/lessons': {
    post: op({
      tag: 'Courses', summary: 'Add a lesson to a module', id: 'addLesson', params: [CID, param('course_id', 'The course\'s id.'), param('module_id', 'The module\'s id.')],
      body: body(object({ title: str, content: str, position: int, video_media_id: { ...uuid, description: 'An uploaded video (`POST /v1/media`).' } }, ['title'])),
      responses: { '201': one('The new lesson.', 'Lesson') },
    }),
  },
  '/v1/communities/{community_id}/courses/{course_id}/enroll': {
    post: op({ tag: 'Courses', summary: 'Enroll in a course', id: 'enrollCourse', params: [CID, param('course_id', 'The course\'s id.')], responses: accessAnswers('CourseEnrollment', 'enrolled') }),
  },
  '/v1/communities/{community_id}/courses/{course_id}/progress': {
    get: op({ tag: 'Courses', summary: 'The caller\'s progress in a course', id: 'courseProgress', params: [CID, param('course_id', 'The course\'s id.')], responses: { '200': one('The progress.', 'CourseProgress') } }),
  },
  '/v1/communities/{community_id}/courses/{course_id}/lessons/{lesson_id}/complete': {
    post: op({
      tag: 'Courses', summary: 'Mark a lesson complete', id: 'completeLesson', params: [CID, param('course_id', 'The course\'s id.'), param('lesson_id', 'The lesson\'s id.')],
      responses: { '200': one('The updated progress.', 'CourseProgress') },
    }),
  },
  '/v1/communities/{community_id}/challenges': {
    get: op({ tag: 'Challenges', summary: 'List challenges', id: 'listChallenges', params: [CID, ...PAGE], responses: { '200': list('A page of challenges.', 'Challenge') } }),
    post: op({
      tag: 'Challenges', summary: 'Create a challenge', id: 'createChallenge', params: [CID],
      body: body(object({
        title: str, description: str, duration_days: int, challenge_type: { type: 'string', enum: ['daily', 'weekly', 'custom'] },
        access_type: { type: 'string', enum: ACCESS }, xp_reward: int, price: num, currency: str,
      }, ['title', 'duration_days', 'challenge_type', 'access_type'])),
      responses: { '201': one('The new challenge.', 'Challenge') },
    }),
  },
  '/v1/communities/{community_id}/challenges/{challenge_id}': {
    get: op({ tag: 'Challenges', summary: 'A challenge', id: 'getChallenge', params: [CID, param('challenge_id', 'The challenge\'s id.')], responses: { '200': one('The challenge.', 'Challenge') } }),
  },
  '/v1/communities/{community_id}/challenges/{challenge_id}/enroll': {
    post: op({ tag: 'Challenges', summary: 'Enroll in a challenge', id: 'enrollChallenge', params: [CID, param('challenge_id', 'The challenge\'s id.')], responses: accessAnswers('ChallengeEnrollment', 'enrolled') }),
  },
  '/v1/communities/{community_id}/challenges/{challenge_id}/progress': {
    get: op({ tag: 'Challenges', summary: 'The caller\'s progress in a challenge', id: 'challengeProgress', params: [CID, param('challenge_id', 'The challenge\'s id.')], responses: { '200': one('The progress.', 'ChallengeProgress') } }),
  },
  '/v1/communities/{community_id}/challenges/{challenge_id}/checkins': {
    post: op({
      tag: 'Challenges', summary: 'Check in for a day', id: 'checkIn', params: [CID, param('challenge_id', 'The challenge\'s id.')],
      body: body(object({ content: str, day_number: int, tags: arrayOf(str) }, ['content', 'day_number'])),
      responses: { '201': one('The check-in and the updated progress. A repeated day is 400.', 'Checkin') },
    }),
  },
  '/v1/communities/{community_id}/challenges/{challenge_id}/leaderboard': {
    get: op({ tag: 'Challenges', summary: 'Participants by rank', id: 'challengeLeaderboard', params: [CID, param('challenge_id', 'The challenge\'s id.'), ...PAGE], responses: { '200': list('A page of entries.', 'LeaderboardEntry') } }),
  },
  '/v1/communities/{community_id}/events': {
    get: op({
      tag: 'Events', summary: 'List events', id: 'listEvents',
      params: [CID, query('status', 'Which events.', { type: 'string', enum: ['upcoming', 'past', 'all'] }), ...PAGE], responses: { '200': list('A page of events.', 'Event') },
    }),
    post: op({
      tag: 'Events', summary: 'Create an event', id: 'createEvent', params: [CID],
      body: body(object({
        title: str, description: str, event_type: { type: 'string', enum: ['online', 'in_person'] }, location: str, starts_at: time, ends_at: time,
        max_attendees: { type: 'integer', description: 'Omit for unlimited.' }, price: { type: 'number', description: '0 means free.' }, currency: str,
      }, ['title', 'event_type', 'starts_at', 'ends_at'])),
      responses: { '201': one('The new event.', 'Event') },
    }),
  },
  '/v1/communities/{community_id}/events/{event_id}': {
    get: op({ tag: 'Events', summary: 'An event', id: 'getEvent', params: [CID, param('event_id', 'The event\'s id.')], responses: { '200': one('The event.', 'Event') } }),
  },
  '/v1/communities/{community_id}/events/{event_id}/register': {
    post: op({ tag: 'Events', summary: 'Register for an event (a ticket)', id: 'registerForEvent', params: [CID, param('event_id', 'The event\'s id.')], responses: { ...accessAnswers('Registration', 'registered'), '409': err('The event is full or over.') } }),
  },
  '/v1/communities/{community_id}/events/{event_id}/checkin': {
    post: op({
      tag: 'Events', summary: 'Check a ticket in (staff)', id: 'checkInEvent', params: [CID, param('event_id', 'The event\'s id.')],
      body: body(object({ ticket_code: str })), responses: { '200': one('The checked-in registration. A repeated check-in is 400.', 'Registration') },
    }),
  },
  '/v1/communities/{community_id}/webhooks': {
    get: op({ tag: 'Webhooks', summary: 'List webhook endpoints', id: 'listWebhooks', params: [CID], responses: { '200': { description: 'The endpoints.', content: json(object({ data: arrayOf(ref('Webhook')) })) } } }),
    post: op({
      tag: 'Webhooks', summary: 'Register a webhook endpoint', id: 'createWebhook', params: [CID],
      body: { required: true, content: { 'application/json': { schema: webhookInput(['url', 'events']), example: WEBHOOK_EXAMPLE } } },
      responses: {
        '201': one('The new endpoint (with its signing secret).', 'Webhook'),
        '409': err('`webhook_endpoint_limit`: the tribe has its maximum of endpoints already (16 by default, `details.limit`); delete one first.'),
      },
    }),
  },
  '/v1/communities/{community_id}/webhooks/{webhook_id}': {
    get: op({ tag: 'Webhooks', summary: 'A webhook endpoint', id: 'getWebhook', params: [CID, param('webhook_id', 'The endpoint\'s id.')], responses: { '200': one('The endpoint.', 'Webhook') } }),
    patch: op({ tag: 'Webhooks', summary: 'Update a webhook endpoint', id: 'updateWebhook', params: [CID, param('webhook_id', 'The endpoint\'s id.')], body: body(webhookInput([])), responses: { '200': one('The endpoint.', 'Webhook') } }),
    delete: op({ tag: 'Webhooks', summary: 'Delete a webhook endpoint (deliveries stop at once)', id: 'deleteWebhook', params: [CID, param('webhook_id', 'The endpoint\'s id.')], responses: { '204': noContent } }),
  },
  '/v1/communities/{community_id}/webhooks/{webhook_id}/test': {
    post: op({
      tag: 'Webhooks', summary: 'Send a test ping', id: 'testWebhook', params: [CID, param('webhook_id', 'The endpoint\'s id.')],
      responses: {
        '200': one('What the receiver answered.', 'WebhookTest'),
        '429': {
          ...err('`webhook_test_rate_limited`: the tribe sent its maximum of test pings (10 by default) in the last 60 seconds; nothing was sent. `details.retryAfterSeconds` as `Retry-After`.'),
          headers: { 'Retry-After': { description: 'Seconds until the tribe may send another test ping.', schema: { type: 'integer', minimum: 1 } } },
        },
      },
    }),
  },
  '/v1/communities/{community_id}/webhooks/{webhook_id}/logs': {
    get: op({ tag: 'Webhooks', summary: 'The endpoint\'s delivery log', id: 'webhookLogs', params: [CID, param('webhook_id', 'The endpoint\'s id.'), ...PAGE], responses: { '200': list('A page of deliveries, newest first.', 'WebhookLog') } }),
  },
  '/v1/media': {
    post: op({
      tag: 'Media', summary: 'Upload an image or video', id: 'uploadMedia',
      description: 'A streamed `multipart/form-data` upload (see docs/media.md); the answer\'s `Location` is the file\'s path.',
      body: {
        required: true,
        content: { 'multipart/form-data': { schema: object({ kind: str, communityId: uuid, file: { type: 'string', contentMediaType: 'application/octet-stream' } }, ['kind', 'file']) } },
      },
      responses: {
        '201': { description: 'The stored media.', content: json(ref('Media')) },
        '400': err('`image_too_large`: the image declares more pixels than its kind allows (avatar 16,000,000, post image 40,000,000); also `invalid_image`, `unsupported_type`, `missing_field` and the other checks of docs/media.md.'),
        '413': err('`file_too_large`.'),
        '429': {
          ...err('`upload_rate_limited` (more than 20 uploads started in the last 60 seconds) or `upload_quota_exceeded` (2,048 MB uploaded in the last 24 hours); nothing was kept. `details.retryAfterSeconds` as `Retry-After`.'),
          headers: { 'Retry-After': { description: 'Seconds until the user may upload again.', schema: { type: 'integer', minimum: 1 } } },
        },
      },
    }),
  },
  '/v1/media/{media_id}/{variant}': {
    get: op({
      tag: 'Media', summary: 'A stored file (ranges, ETag)', id: 'getMedia',
      description: 'The bytes of a variant. A private tribe\'s file needs the signed URL the API gave (its query parameters) or a token.',
      params: [param('media_id', 'The media id.'), param('variant', 'The variant name (e.g. `original`).', str)],
      responses: {
        '200': { description: 'The file.', content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
        '206': { description: 'The requested range.' },
        '304': { description: 'Not modified (`If-None-Match`).' },
        '416': { description: 'Range not satisfiable.' },
      },
    }),
  },
};

const DESCRIPTION = `The token-authenticated resource API (\`/v1/auth/*\`, \`/v1/communities/*\`, \`/v1/media\`): what the web and
mobile apps use, as a signed-in user. The Platform API (API keys, read-only) is the other document on this page.

## Authentication
Get an access token (a JWT, valid \`expires_in\` seconds: 3600) with \`POST /v1/auth/login\`, and send it as
\`Authorization: Bearer <access_token>\`. Renew it with \`POST /v1/auth/refresh\`: each refresh token works once.
To try a request here, call **Sign in** with your email and password, copy \`access_token\` into the
**Authentication** box (*Bearer Token*), then send.

A server integration can use a **personal API key** instead (*PersonalApiKey*), sent the same way:
\`Authorization: Bearer svc_pk_...\`. Create it signed in, in the console's account settings (\`/console/-/settings\`)
or with the GraphQL mutation \`createPersonalApiKey\`; it is shown once. It acts as the user who created it, on this
API only (the Platform API answers it 401), within its scopes: \`read\` allows GET and HEAD, \`write\` allows POST,
PUT, PATCH and DELETE (a key has one or both; both by default); a method outside them is 403 \`insufficient_scope\`.
Revoking it, or suspending or deleting its user, stops it at the next request (401). At most 10 live keys per user.
Keep it on a server: never in client-side code.

## Records and lists
Records are snake_case inside \`{"data": ...}\`. Lists answer \`{"data": [...], "pagination": {"page", "per_page", "has_more"}}\`
and take \`page\` (from 1) and \`per_page\` (default 20, at most 50). Pages are counted by offset: a long scan can see
a record twice or miss one when records are added or removed meanwhile.

## Errors
Every error is \`{"error": {"code", "message", "details"?, "request_id"}}\`: branch on \`code\` (\`unauthorized\` 401, \`forbidden\` 403,
\`not_found\` 404, \`invalid_input\` / \`invalid_query\` / \`malformed_json\` 400, \`conflict\`-kind codes 409,
\`payload_too_large\` 413, \`unsupported_media_type\` 415, \`rate_limited\` 429 with \`Retry-After\`,
\`service_unavailable\` 503 with \`Retry-After\`, \`internal_error\` 500). \`message\` is human text and may change.
\`request_id\` is the id of the request, also in the \`x-request-id\` header of every answer (yours when you send a
well-formed one: 1 to 128 of \`A-Z a-z 0-9 . _ : -\`); quote it when reporting a problem.
An unknown route under these prefixes is 404 \`not_found\` in this envelope.`;

/** The document (OpenAPI 3.1). */
export const RESOURCE_OPENAPI = {
  openapi: '3.1.0',
  info: { title: 'Tribes resource API', version: '1.0.0', description: DESCRIPTION, license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
  servers: [{ url: '/', description: 'This service' }],
  security: [{ BearerAuth: [] }, { PersonalApiKey: [] }],
  tags: [
    { name: 'Auth', description: 'Tokens and the signed-in user.' },
    { name: 'Communities', description: 'Tribes.' },
    { name: 'Members', description: 'Memberships and roles.' },
    { name: 'Posts', description: 'Posts and comments.' },
    { name: 'Courses', description: 'Courses, modules, lessons, enrollment and progress.' },
    { name: 'Challenges', description: 'Challenges, check-ins and leaderboards.' },
    { name: 'Events', description: 'Events, registrations (tickets) and check-in.' },
    { name: 'Webhooks', description: 'A tribe\'s webhook endpoints (owner or admin).' },
    { name: 'Media', description: 'Uploads and stored files.' },
  ],
  paths,
  components: {
    securitySchemes: {
      BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The `access_token` of `POST /v1/auth/login`.' },
      PersonalApiKey: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'svc_pk_ followed by 43 base64url characters',
        description:
          'A personal API key (spec 5.3): `Authorization: Bearer svc_pk_...`. It carries the permissions of the user who created it (console account settings, or GraphQL `createPersonalApiKey`) on this API only, within its scopes: `read` (GET, HEAD) and/or `write` (POST, PUT, PATCH, DELETE); otherwise 403 `insufficient_scope`.',
      },
    },
    schemas,
  },
} as const;

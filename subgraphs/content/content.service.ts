import sanitizeHtml from 'sanitize-html';
import { z } from 'zod';
import { getCommunity, type Community } from '../communities/index.js';
import {
  type RequestContext,
  forbidden,
  invalid,
  isUuid,
  notFound,
  paging,
  parseInput,
  toPage,
  type Page,
  platformPaging,
  toPlatformPage,
  type PlatformPage,
  idLoader,
  text,
  requireScope,
} from '../kernel/index.js';
import { RANK, recordActivity, requireActiveMember, requireRole, requireView, viewerRole, type Role } from '../members/index.js';
import { isMediaPath, requireUsableMedia } from '../media/index.js';
import { emitEvent } from '../outbox/index.js';
import * as repo from './content.repository.js';
import { syncMentions } from './mentions.service.js';
import { requireUnderPostingLimit } from './posting-limit.js';
import { newMemberPostCheck, reportHeld, screenPost } from './automod.service.js';
import { POST_STATUSES, VISIBILITIES, type Comment, type Post, type Visibility } from './content.tables.js';

export type { Comment, Post } from './content.tables.js';

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img'],
  allowedAttributes: { a: ['href', 'title', 'target', 'rel'], img: ['src', 'alt', 'title', 'width', 'height'] },
  allowedSchemes: ['https', 'http', 'mailto'],
  allowedSchemesByTag: { img: ['https'] },
  allowProtocolRelative: false,
};

/**
 * An input with a post's or comment's text (issue 31, one vocabulary): `body` is its name on every surface (GraphQL
 * `Post.body`, the Platform API, the Application API), and `content`, its name in GraphQL input and the resource API
 * until then, stays accepted as a deprecated alias. Each is validated under the name sent (errors name it); both at
 * once is `invalid_input`; `required`: one of them must be sent. The parsed input carries the text as `body` and
 * `bodyField`, the name it came under.
 */
export function withBody<S extends z.ZodRawShape>(shape: S, text: z.ZodString, required: boolean) {
  type Texts = { body?: string | null; content?: string | null };
  return z
    .object({ ...shape, body: text.optional().nullable(), content: text.optional().nullable() })
    .superRefine((v, issues) => {
      const texts = v as Texts;
      const sent = (['body', 'content'] as const).filter((k) => texts[k] !== undefined && texts[k] !== null);
      if (sent.length === 2) issues.addIssue({ code: 'custom', path: ['body'], message: 'send body or content (its deprecated name), not both' });
      else if (required && sent.length === 0) issues.addIssue({ code: 'custom', path: ['body'], message: 'is required' });
    })
    .transform((v) => {
      const { body, content, ...rest } = v as unknown as Texts & z.output<z.ZodObject<S>>;
      const fromContent = (body === undefined || body === null) && content !== undefined && content !== null;
      return { ...rest, body: (body ?? content ?? undefined) as string | undefined, bodyField: fromContent ? ('content' as const) : ('body' as const) };
    });
}

/** Strips everything that could run script; what is left is safe to render as HTML. */
export const sanitizeContent = (html: string): string => sanitizeHtml(html, SANITIZE).trim();

const content = text({ max: 50_000 });
// An http(s) URL, or the `/media/{id}/{variant}` path of an upload (checked against the media in `usableMedia`).
const mediaUrl = z.union([z.url({ protocol: /^https?$/ }).max(2048), z.string().max(2048).refine(isMediaPath)], {
  error: 'each media URL must be an http(s) URL or an uploaded /media/{id}/{variant} path',
});
const mediaUrls = z.array(mediaUrl, { error: 'media_urls must be an array of URLs' }).max(10, 'at most 10 media URLs');
const postFields = {
  content,
  mediaUrls,
  isPinned: z.boolean({ error: 'is_pinned must be a boolean' }),
  visibility: z.enum(VISIBILITIES),
  status: z.enum(POST_STATUSES),
};
const createPostInput = withBody(
  {
    mediaUrls: postFields.mediaUrls.optional().nullable(),
    isPinned: postFields.isPinned.optional().nullable(),
    visibility: postFields.visibility.optional().nullable(),
    status: postFields.status.optional().nullable(),
  },
  content,
  true,
);
const updatePostInput = withBody(
  {
    mediaUrls: postFields.mediaUrls.optional(),
    isPinned: postFields.isPinned.optional(),
    visibility: postFields.visibility.optional(),
    status: postFields.status.optional(),
  },
  content,
  false,
);
const listInput = z.object({
  pinned: z.boolean().optional().nullable(),
  authorId: z.string().refine(isUuid, 'author_id must be a UUID').optional().nullable(),
  page: z.number().optional().nullable(),
  perPage: z.number().optional().nullable(),
});

/** Which post visibilities a role sees: outsiders public only, members also members-only, moderators all. */
export function visibleTo(role: Role | null): Visibility[] {
  if (!role) return ['public'];
  return RANK[role] >= RANK.moderator ? [...VISIBILITIES] : ['public', 'members'];
}

/** Moderators and above see content removed by moderators; so does its author (with the removal shown). */
export const seesRemoved = (role: Role | null): boolean => !!role && RANK[role] >= RANK.moderator;

function canSee(ctx: RequestContext, post: Post, role: Role | null): boolean {
  if (ctx.caller && post.authorId === ctx.caller.userId) return true;
  if (post.removedAt && !seesRemoved(role)) return false;
  if (post.status !== 'published') return !!role && RANK[role] >= RANK.moderator;
  return visibleTo(role).includes(post.visibility);
}

const postLoader = (ctx: RequestContext) =>
  idLoader<Post>(ctx, 'content.postById', (ids) => repo.findPostsByIds(ctx.app.database.db, ids));

/**
 * A post the caller may see, or `not_found` (also when it is in another tribe than `communityId`,
 * or not visible to the caller: a hidden post is indistinguishable from a missing one).
 */
export async function getPost(ctx: RequestContext, id: string, communityId?: string | null): Promise<Post> {
  const post = await readablePost(ctx, id);
  if (!post || (communityId && post.communityId !== communityId)) throw notFound('Post');
  return post;
}

/**
 * The post when the caller may see it, by the rules of `getPost` (the root field `post`), else null: what every
 * other path to a post answers (entity references, a comment's post, a notification's or a moderation item's post),
 * so that a draft, a removed post, a post for members only or of a private tribe never leaks through a seam.
 */
export async function readablePost(ctx: RequestContext, id: string): Promise<Post | null> {
  const post = await postLoader(ctx).load(id);
  if (!post) return null;
  const community = await getCommunity(ctx, post.communityId);
  const role = await viewerRole(ctx, community.id);
  return (community.isPublic || role) && canSee(ctx, post, role) ? post : null;
}

/** Published posts of a tribe the caller may see, newest first (removed ones: moderators and their author only). */
export async function listPosts(ctx: RequestContext, communityId: string, raw: unknown): Promise<Page<Post>> {
  const community = await getCommunity(ctx, communityId);
  const role = await requireView(ctx, community);
  const input = parseInput(listInput, raw);
  const p = paging(input.page, input.perPage);
  const rows = await repo.listPosts(
    ctx.app.database.db,
    community.id,
    {
      pinned: input.pinned ?? undefined,
      authorId: input.authorId ?? undefined,
      visibilities: visibleTo(role),
      removedVisibleTo: seesRemoved(role) ? 'all' : (ctx.caller?.userId ?? 'none'),
    },
    p.perPage + 1,
    p.offset,
    ctx.app.clock(),
  );
  return toPage(rows, p);
}

/** Sanitized post or comment text, or `invalid_input` (naming `field`, the name it was sent under) when nothing is left of it. */
export function cleanBody(raw: string, field: 'body' | 'content' = 'body'): string {
  const body = sanitizeContent(raw);
  if (!body) throw invalid('invalid_input', `${field}: is required and must contain text after removing unsafe HTML.`, [
    { field, message: 'is required' },
  ]);
  return body;
}

/**
 * A post's media: uploads (`/media/...` paths, stored unsigned) must be the author's own post images of the post's
 * tribe, or of no tribe when the tribe is public; else `invalid_media` (see `requireUsableMedia`).
 */
const usableMedia = (ctx: RequestContext, community: Community, urls: string[]) =>
  requireUsableMedia(ctx, urls, { kind: 'post_image', communityId: community.id, communityIsPublic: community.isPublic }, 'media_urls');

/** Creates a post (members; pinning needs moderator or above). A published post emits `post.created`. */
export async function createPost(ctx: RequestContext, communityId: string, raw: unknown): Promise<Post> {
  const community: Community = await getCommunity(ctx, communityId);
  const { role, userId } = await requireActiveMember(ctx, community.id);
  const input = parseInput(createPostInput, raw);
  if (input.isPinned && RANK[role] < RANK.moderator) throw forbidden('Pinning posts needs the moderator role or above.');
  const body = cleanBody(input.body ?? '', input.bodyField);
  const mediaUrls = await usableMedia(ctx, community, input.mediaUrls ?? []);
  const now = ctx.app.clock();
  // Automod: holds a published post it flags for review; refuses a new member's post past the tribe's limit.
  const screened = await screenPost(ctx, community.id, role, body);
  const requireUnderNewMemberLimit = await newMemberPostCheck(ctx, community.id, userId, role, now);
  const requested = input.status ?? 'published';
  const status = requested === 'published' && screened.held ? 'pending_review' : requested;
  return ctx.app.database.db.transaction(async (tx) => {
    await requireUnderPostingLimit(ctx, tx, userId, now);
    await requireUnderNewMemberLimit(tx);
    const post = await repo.insertPost(tx, {
      communityId: community.id,
      authorId: userId,
      body,
      mediaUrls,
      visibility: input.visibility ?? 'public',
      status,
      heldReason: status === 'pending_review' && screened.held ? screened.reason : null,
      pinnedAt: input.isPinned ? now : null,
      publishedAt: status === 'published' ? now : null,
      ...(status === 'published' ? repo.publishedScores(now) : {}),
      createdAt: now,
      updatedAt: now,
    });
    await recordActivity(tx, community.id, userId, now);
    if (post.status === 'pending_review' && screened.held) {
      await reportHeld(ctx, tx, { communityId: community.id, kind: 'post', id: post.id, authorId: userId }, screened.reason, now);
    }
    // A held post's mentions are resolved (and announced) when a moderator approves it.
    if (status !== 'pending_review') {
      await syncMentions(tx, { communityId: community.id, postId: post.id, commentId: null, authorId: userId, html: body }, now, true);
    }
    if (status === 'published') {
      await emitEvent(tx, community.id, 'post.created', { postId: post.id, authorId: post.authorId, handle: community.handle });
    }
    return post;
  });
}

/**
 * Changes only the sent fields. The author edits content, media, visibility and status;
 * pinning and unpinning need moderator or above; moderators may not rewrite others' content.
 */
export async function updatePost(ctx: RequestContext, communityId: string | null | undefined, id: string, raw: unknown): Promise<Post> {
  const post = await getPost(ctx, id, communityId);
  const { role, userId } = await requireRole(ctx, post.communityId, 'member');
  const input = parseInput(updatePostInput, raw);
  const isAuthor = post.authorId === userId;
  const isModerator = RANK[role] >= RANK.moderator;
  const editsBody = input.body !== undefined || input.mediaUrls !== undefined || input.visibility !== undefined || input.status !== undefined;
  if (editsBody && !isAuthor) throw forbidden('Only the author edits a post.');
  if (input.isPinned !== undefined && !isModerator) throw forbidden('Pinning posts needs the moderator role or above.');
  if (post.status === 'pending_review' && input.status !== undefined) {
    throw invalid('held_for_review', 'status: this post waits for a moderator\'s review, who publishes or rejects it.');
  }
  // Automod screens a draft being published as it screens a new post (without counting it again).
  const screened =
    input.status === 'published' && post.status === 'draft'
      ? await screenPost(ctx, post.communityId, role, input.body !== undefined ? cleanBody(input.body, input.bodyField) : post.body)
      : ({ held: false } as const);
  const patch: Partial<Post> = {};
  if (input.body !== undefined) patch.body = cleanBody(input.body, input.bodyField);
  if (input.mediaUrls !== undefined) patch.mediaUrls = await usableMedia(ctx, await getCommunity(ctx, post.communityId), input.mediaUrls);
  if (input.visibility !== undefined) patch.visibility = input.visibility;
  if (input.status !== undefined) {
    patch.status = screened.held ? 'pending_review' : input.status;
    if (screened.held) patch.heldReason = screened.reason;
    if (input.status === 'published' && !post.publishedAt && !screened.held) {
      const now = ctx.app.clock();
      Object.assign(patch, { publishedAt: now, ...repo.publishedScores(now) });
    }
  }
  if (input.isPinned !== undefined) patch.pinnedAt = input.isPinned ? (post.pinnedAt ?? ctx.app.clock()) : null;
  if (Object.keys(patch).length === 0) throw invalid('empty', 'Send at least one field to change.');
  const community = await getCommunity(ctx, post.communityId);
  const updated = await ctx.app.database.db.transaction(async (tx) => {
    const row = await repo.updatePost(tx, post.id, patch);
    if (screened.held) await reportHeld(ctx, tx, { communityId: row.communityId, kind: 'post', id: row.id, authorId: row.authorId }, screened.reason, ctx.app.clock());
    if (patch.body !== undefined) {
      await syncMentions(tx, { communityId: row.communityId, postId: row.id, commentId: null, authorId: row.authorId, html: row.body }, ctx.app.clock());
    }
    // A draft becoming published is when the tribe hears of it, exactly once (publishedAt is set once).
    if (patch.publishedAt) {
      await emitEvent(tx, community.id, 'post.created', { postId: row.id, authorId: row.authorId, handle: community.handle });
    }
    return row;
  });
  postLoader(ctx).clear(id).prime(id, updated);
  return updated;
}

/** Deletes a post and its comments (the author, or moderators and above). */
export async function deletePost(ctx: RequestContext, communityId: string | null | undefined, id: string): Promise<boolean> {
  const post = await getPost(ctx, id, communityId);
  const { role, userId } = await requireRole(ctx, post.communityId, 'member');
  if (post.authorId !== userId && RANK[role] < RANK.moderator) {
    throw forbidden('Only the author or a moderator deletes a post.');
  }
  await repo.deletePost(ctx.app.database.db, post.id);
  postLoader(ctx).clear(id);
  return true;
}

/** A post by id without a visibility check, for entity references from other subgraphs (ids come from us). */
export const postById = (ctx: RequestContext, id: string): Promise<Post | null> => postLoader(ctx).load(id);

/**
 * Platform API (`posts:read`): published PUBLIC posts of the key's tribe, newest publication first.
 * Members-only and paid posts, and drafts, are never read over a key.
 */
export async function platformPosts(ctx: RequestContext, raw: { page?: number | null; pageSize?: number | null }): Promise<PlatformPage<Post>> {
  const communityId = requireScope(ctx, 'posts:read');
  const p = platformPaging(raw.page, raw.pageSize);
  return toPlatformPage(await repo.listPublicPublished(ctx.app.database.db, communityId, p.pageSize, p.offset), p);
}

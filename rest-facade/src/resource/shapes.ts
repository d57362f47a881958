/** GraphQL results to the resource API's snake_case records (spec 2.6). */
import { fromCents } from '../../../subgraphs/commerce/index.js';
import type { User } from '../../../subgraphs/identity/index.js';
import type { EnrollCourseMutation, GetCommunityQuery, GetMemberQuery, GetPostQuery, ListCommentsQuery, ListCommunitiesQuery } from '../generated.js';
import { present } from '../errors.js';

type Community = ListCommunitiesQuery['communities']['items'][number];
type FullCommunity = NonNullable<GetCommunityQuery['community']>;
type Member = NonNullable<GetMemberQuery['member']>;
type Post = NonNullable<GetPostQuery['post']>;
type Comment = ListCommentsQuery['comments']['items'][number];
type Person = { id: string; username: string; displayName: string };
/** What a paid enroll or register answers besides its record (the documents' `ORDER` selection). */
type PendingOrder = Pick<EnrollCourseMutation['enrollCourse'], 'status' | 'created' | 'order' | 'checkout'>;

export const userRecord = (u: User) => ({
  id: u.id,
  email: u.email,
  username: u.username,
  display_name: u.displayName,
  avatar_url: u.avatarUrl ?? null,
});

export const communityRecord = (c: Community) => ({
  id: c.id,
  name: c.name,
  handle: c.handle,
  description: c.description,
  member_count: c.memberCount,
  is_public: c.isPublic,
  category: c.category ?? null,
  viewer_role: c.viewerRole ?? null,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

/**
 * The full community object (spec 2.6: a single tribe, created or updated): the list's fields plus `settings` (the
 * tribe's switches, read-only; `moderation` only for moderators and above, else null) and `metadata`.
 */
export const fullCommunityRecord = (c: FullCommunity) => {
  const m = c.settings.moderation;
  return {
    ...communityRecord(c),
    settings: {
      visibility: c.settings.visibility,
      join_policy: c.settings.joinPolicy,
      default_post_visibility: c.settings.defaultPostVisibility,
      moderation: m
        ? { require_approval: m.requireApproval, new_member_post_limit: m.newMemberPostLimit, blocked_words: m.blockedWords, blocked_domains: m.blockedDomains }
        : null,
    },
    metadata: c.metadata as Record<string, unknown>,
  };
};

export const memberRecord = (m: Member) => ({
  id: m.id,
  user_id: m.user.id,
  username: m.user.username,
  display_name: m.user.displayName,
  role: m.role,
  joined_at: m.joinedAt,
  xp: m.xp,
  level: m.level,
});

const author = (a: Person | null) => (a ? { id: a.id, username: a.username, display_name: a.displayName } : null);

export const postRecord = (p: Post) => ({
  id: p.id,
  community_id: p.community.id,
  author_id: p.author?.id ?? null,
  author: author(p.author),
  body: p.body,
  /** Deprecated (issue 31): the same text as `body`, kept for clients of the spec's first names. */
  content: p.body,
  media_urls: p.mediaUrls,
  is_pinned: p.isPinned,
  pinned_at: p.pinnedAt,
  visibility: p.visibility,
  status: p.status,
  published_at: p.publishedAt,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
});

export const commentRecord = (c: Comment) => ({
  id: c.id,
  post_id: c.post.id,
  author_id: c.author?.id ?? null,
  author: author(c.author),
  parent_id: c.parentId,
  body: c.body,
  /** Deprecated (issue 31): the same text as `body`. */
  content: c.body,
  created_at: c.createdAt,
});

/** The list body: `data` plus exact `pagination`. */
export const listBody = <I, T>(page: { items: I[]; page: number; perPage: number; hasMore: boolean }, shape: (x: I) => T) => ({
  data: page.items.map(shape),
  pagination: { page: page.page, per_page: page.perPage, has_more: page.hasMore },
});

/** A pending order as enroll and register answer it: `amount` in major units, plus the exact cents. */
export const orderRecord = (o: NonNullable<PendingOrder['order']>, checkout: PendingOrder['checkout']) => ({
  id: o.id,
  amount: fromCents(o.amountCents),
  amount_cents: o.amountCents,
  currency: o.currency,
  status: o.status,
  checkout: checkout ? Object.fromEntries(Object.entries(checkout).filter(([, v]) => v !== null)) : null,
});

/**
 * The answer of enroll and register: 201 with the new record, 200 with the existing one, or 202 with the
 * pending order for a paid item not paid yet. `shape` turns the result into the enrollment or registration record.
 */
export function accessResponse<R extends PendingOrder>(result: R, shape: (result: R) => unknown): { status: number; body: unknown } {
  if (result.status === 'pending_payment') {
    return { status: 202, body: { data: { status: 'pending_payment', order: orderRecord(present(result.order), result.checkout) } } };
  }
  return { status: result.created ? 201 : 200, body: { data: shape(result) } };
}

/** GraphQL results to the resource API's snake_case records (spec 2.6). */

type G = Record<string, any>;

export const userRecord = (u: G) => ({
  id: u.id,
  email: u.email,
  username: u.username,
  display_name: u.displayName,
  avatar_url: u.avatarUrl ?? null,
});

export const communityRecord = (c: G) => ({
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

export const memberRecord = (m: G) => ({
  id: m.id,
  user_id: m.user.id,
  username: m.user.username,
  display_name: m.user.displayName,
  role: m.role,
  joined_at: m.joinedAt,
  xp: m.xp,
  level: m.level,
});

const author = (a: G | null) => (a ? { id: a.id, username: a.username, display_name: a.displayName } : null);

export const postRecord = (p: G) => ({
  id: p.id,
  community_id: p.community.id,
  author_id: p.author?.id ?? null,
  author: author(p.author),
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

export const commentRecord = (c: G) => ({
  id: c.id,
  post_id: c.post.id,
  author_id: c.author?.id ?? null,
  author: author(c.author),
  parent_id: c.parentId,
  content: c.body,
  created_at: c.createdAt,
});

/** The list body: `data` plus exact `pagination`. */
export const listBody = <T>(page: { items: G[]; page: number; perPage: number; hasMore: boolean }, shape: (x: G) => T) => ({
  data: page.items.map(shape),
  pagination: { page: page.page, per_page: page.perPage, has_more: page.hasMore },
});

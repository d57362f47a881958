/** Fixed GraphQL documents the resource API runs through the gateway (never built from input). */

import { restDocument } from '../typed-document.js';

const COMMUNITY = 'id name handle description isPublic category createdAt updatedAt memberCount viewerRole';
/** The full community object (spec 2.6): the list's fields plus settings and metadata. */
const COMMUNITY_FULL = `${COMMUNITY} metadata settings { visibility joinPolicy defaultPostVisibility moderation { requireApproval newMemberPostLimit blockedWords blockedDomains } }`;
const MEMBER = 'id role xp level joinedAt user { id username displayName }';
const AUTHOR = 'author { id username displayName }';
const POST = `id community { id } ${AUTHOR} body mediaUrls visibility status isPinned pinnedAt publishedAt createdAt updatedAt`;
const COMMENT = `id post { id } ${AUTHOR} parentId body createdAt`;
export const PAGE = 'page perPage hasMore';
/** The pending order (and where to pay it) that a paid enroll or register answers. */
export const ORDER = 'order { id amountCents currency status } checkout { provider url }';

export const Docs = {
  listCommunities: restDocument(`query ListCommunities($search: String, $page: Int, $perPage: Int) {
    communities(search: $search, page: $page, perPage: $perPage) { items { ${COMMUNITY} } ${PAGE} } }`),
  getCommunity: restDocument(`query GetCommunity($id: ID!) { community(id: $id) { ${COMMUNITY_FULL} } }`),
  createCommunity: restDocument(`mutation CreateCommunity($input: CreateCommunityInput!) { createCommunity(input: $input) { ${COMMUNITY_FULL} } }`),
  updateCommunity: restDocument(`mutation UpdateCommunity($id: ID!, $input: UpdateCommunityInput!) {
    updateCommunity(id: $id, input: $input) { ${COMMUNITY_FULL} } }`),
  deleteCommunity: restDocument(`mutation DeleteCommunity($id: ID!) { deleteCommunity(id: $id) }`),

  listMembers: restDocument(`query ListMembers($communityId: ID!, $role: String, $search: String, $page: Int, $perPage: Int) {
    members(communityId: $communityId, role: $role, search: $search, page: $page, perPage: $perPage) { items { ${MEMBER} } ${PAGE} } }`),
  getMember: restDocument(`query GetMember($communityId: ID!, $userId: ID!) { member(communityId: $communityId, userId: $userId) { ${MEMBER} } }`),
  updateMemberRole: restDocument(`mutation UpdateMemberRole($communityId: ID!, $userId: ID!, $role: String) {
    updateMemberRole(communityId: $communityId, userId: $userId, role: $role) { ${MEMBER} } }`),
  removeMember: restDocument(`mutation RemoveMember($communityId: ID!, $userId: ID!) { removeMember(communityId: $communityId, userId: $userId) }`),

  listPosts: restDocument(`query ListPosts($communityId: ID!, $pinned: Boolean, $authorId: ID, $page: Int, $perPage: Int) {
    posts(communityId: $communityId, pinned: $pinned, authorId: $authorId, page: $page, perPage: $perPage) { items { ${POST} } ${PAGE} } }`),
  getPost: restDocument(`query GetPost($id: ID!, $communityId: ID) { post(id: $id, communityId: $communityId) { ${POST} } }`),
  createPost: restDocument(`mutation CreatePost($communityId: ID!, $input: CreatePostInput!) { createPost(communityId: $communityId, input: $input) { ${POST} } }`),
  updatePost: restDocument(`mutation UpdatePost($id: ID!, $communityId: ID, $input: UpdatePostInput!) {
    updatePost(id: $id, communityId: $communityId, input: $input) { ${POST} } }`),
  deletePost: restDocument(`mutation DeletePost($id: ID!, $communityId: ID) { deletePost(id: $id, communityId: $communityId) }`),
  listComments: restDocument(`query ListComments($postId: ID!, $communityId: ID, $page: Int, $perPage: Int) {
    comments(postId: $postId, communityId: $communityId, page: $page, perPage: $perPage) { items { ${COMMENT} } ${PAGE} } }`),
  createComment: restDocument(`mutation CreateComment($postId: ID!, $communityId: ID, $input: CreateCommentInput!) {
    createComment(postId: $postId, communityId: $communityId, input: $input) { ${COMMENT} } }`),
} as const;

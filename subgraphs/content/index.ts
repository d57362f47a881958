export {
  getPost,
  listPosts,
  createPost,
  updatePost,
  deletePost,
  listComments,
  createComment,
  sanitizeContent,
  postById,
} from './content.service.js';
export type { Comment, Post } from './content.service.js';

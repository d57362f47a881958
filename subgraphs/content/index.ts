export {
  getPost,
  listPosts,
  createPost,
  updatePost,
  deletePost,
  sanitizeContent,
  postById,
} from './content.service.js';
export { listComments, createComment, updateComment, deleteComment } from './comments.service.js';
export type { Comment, Post } from './content.service.js';

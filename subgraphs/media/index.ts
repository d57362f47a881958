// The media domain: uploads (streamed, sniffed, images re-encoded), the file store, signed URLs. See docs/media.md.
export { authorizeUpload, avatarMedia, FILE_TOO_LARGE, presentMediaUrls, requireUsableMedia, storeUpload, uploadMedia } from './media.service.js';
export type { MediaUse, UploadedMedia, UploadFields, UploadPlan } from './media.service.js';
// Serving: who may fetch a file and how long caches keep it (a tribe's rule, a course's rule for lesson videos).
export { IMMUTABLE_PUBLIC, openVariant, TRIBE_MEDIA_MAX_AGE_SECONDS } from './media.access.js';
export type { LessonVideoAccess, LessonVideoRule, ServedVariant } from './media.access.js';
export { LocalDiskStorage, StorageNotFound, mediaKey, mediaPrefix } from './storage.js';
export type { ByteRange, MediaStorage, ObjectInfo, StoredObject } from './storage.js';
export { checkSignature, isMediaPath, mediaPath, parseMediaPath, signMediaPath, signMediaPathFor } from './urls.js';
export { sniff } from './sniff.js';
export type { SniffedType } from './sniff.js';
export { MEDIA_KINDS } from './media.tables.js';
export type { Media, MediaKind, MediaVariant } from './media.tables.js';
// Video lessons: HLS transcoding of lesson_video uploads (the media.transcode job), their state, signed playlists.
export { enqueueTranscode, HLS_PLAYLIST_TYPE, JOB_MEDIA_TRANSCODE, signedPlaylist, transcodePending, transcodeRuntime, videoStates } from './transcode.js';
export type { TranscodeResult, TranscodeRuntime, VideoState } from './transcode.js';
// Upload limits (issue 29): per-user rate and byte quota, pixel budgets, per-process processing queues.
export { requireUploadQuota, takeUploadAttempt, UPLOAD_QUOTA_WINDOW_SECONDS, UPLOAD_RATE_WINDOW_SECONDS } from './upload-limits.js';
export { mediaWork, WorkQueue } from './processing.js';
export type { MediaWork } from './processing.js';
export { PIXEL_BUDGETS } from './images.js';

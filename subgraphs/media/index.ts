// The media domain: uploads (streamed, sniffed, images re-encoded), the file store, signed URLs. See docs/media.md.
export { authorizeUpload, avatarMedia, FILE_TOO_LARGE, openVariant, presentMediaUrls, requireUsableMedia, storeUpload, uploadMedia } from './media.service.js';
export type { MediaUse, ServedVariant, UploadedMedia, UploadFields, UploadPlan } from './media.service.js';
export { LocalDiskStorage, StorageNotFound, mediaKey, mediaPrefix } from './storage.js';
export type { ByteRange, MediaStorage, ObjectInfo, StoredObject } from './storage.js';
export { checkSignature, isMediaPath, mediaPath, parseMediaPath, signMediaPath } from './urls.js';
export { sniff } from './sniff.js';
export type { SniffedType } from './sniff.js';
export { MEDIA_KINDS } from './media.tables.js';
export type { Media, MediaKind, MediaVariant } from './media.tables.js';
// Video lessons: HLS transcoding of lesson_video uploads (the media.transcode job), their state, signed playlists.
export { enqueueTranscode, HLS_PLAYLIST_TYPE, JOB_MEDIA_TRANSCODE, signedPlaylist, transcodePending, transcodeRuntime, videoStates } from './transcode.js';
export type { TranscodeResult, TranscodeRuntime, VideoState } from './transcode.js';

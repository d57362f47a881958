export { openDatabase } from './database.js';
export type { Database, DatabaseOptions, Db, Tx, Executor } from './database.js';
export { migrate, loadMigrations } from './migrate.js';
export type { Migration } from './migrate.js';
export { preparedOnce } from './prepared.js';
export { SteppedKeys } from './page-keys.js';
export { CHANGES_CHANNEL, Remembered, rememberedPerDatabase, rowsByIdRemembered } from './changes.js';
export type { ChangeFeed } from './changes.js';

export * from './errors.js';
export * from './context.js';
export * from './paging.js';
export * from './validate.js';
export { loadConfig, ConfigError } from './config.js';
export type { AppConfig } from './config.js';
export * from './tokens.js';
export { countLoader, idLoader, viewerLoader } from './loaders.js';

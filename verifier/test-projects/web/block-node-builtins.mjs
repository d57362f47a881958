// Preload (node --import) that makes every later import of a Node built-in throw, to prove a module
// graph runs on Web APIs alone, as on Cloudflare Workers or in a browser.
import { register } from 'node:module';

register('./block-node-builtins.hooks.mjs', import.meta.url);

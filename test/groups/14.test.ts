// A group of the service tier's files (test/groups.cjs).
import { runGroup } from './group.js';

await runGroup(import.meta.url);

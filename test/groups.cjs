// The service tier's files run in groups: each group is one Jest test file (test/groups/NN.test.ts) that imports its
// files one after the other, so they share one module registry. Jest loads every module a test file imports into the
// file's own registry, the service's and its libraries' (Apollo's gateway, OpenTelemetry, graphql, zod...): about
// 2.5 s of CPU per file before its first assertion, a fifth of the suite's CPU with 100 files.
//
// A file runs alone (its own Jest test file, as before) when
// - it sets hooks or Jest's settings at its top level (`beforeAll(...)`, `jest.setTimeout(...)` outside any
//   `describe`): in a group they would apply to every file of the group;
// - it opens embedded PGlite (`pglite` in its name): seconds of CPU each, started early (test/sequencer.cjs);
// - it belongs to the processes tier (PROCESS_FILES here, the processes project in jest.config.cjs);
// - or Jest's command line has a path pattern into test/ (`npm test -- test/comments.test.ts`, `test/resource`): then
//   every file runs alone, and the pattern picks them.
// Files are dealt to GROUP_COUNT groups by size, largest first, each to the group with the fewest bytes so far: the
// same groups on every machine, and a new file joins a group by itself.
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');

const TEST_DIR = __dirname;
/** The group files there are (test/groups/01 to 16.test.ts). */
const GROUP_FILES = 16;
/**
 * `TEST_GROUPS` (1 to 16, default 16) deals the files to fewer groups: each file gets other neighbours, which shows a
 * test that passes only after, or only without, what another file leaves in the process (a module's cache, a metric).
 */
const GROUP_COUNT = (() => {
  const asked = process.env.TEST_GROUPS;
  if (asked === undefined || asked === '') return GROUP_FILES;
  const n = Number(asked);
  if (!Number.isInteger(n) || n < 1 || n > GROUP_FILES) throw new Error(`TEST_GROUPS must be an integer from 1 to ${GROUP_FILES}, got "${asked}"`);
  return n;
})();

/** The files of test/ itself that belong to the processes tier (they start processes of their own). */
const PROCESS_FILES = ['split.test.ts', 'realtime-processes.test.ts', 'start-stop.test.ts', 'data-dir-lock.test.ts', 'metrics-processes.test.ts', 'tracing-processes.test.ts'];

const TOP_LEVEL_SETUP = /^(beforeAll|afterAll|beforeEach|afterEach|jest\.)/m;

/** `test/*.test.ts` file names that run alone, and the groups of the others (arrays of file names). */
function serviceFiles() {
  const names = readdirSync(TEST_DIR).filter((name) => name.endsWith('.test.ts') && !PROCESS_FILES.includes(name));
  const alone = names.filter((name) => /pglite/i.test(name) || TOP_LEVEL_SETUP.test(readFileSync(join(TEST_DIR, name), 'utf8')));
  const grouped = names
    .filter((name) => !alone.includes(name))
    .map((name) => ({ name, bytes: statSync(join(TEST_DIR, name)).size }))
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
  const groups = Array.from({ length: GROUP_COUNT }, () => ({ bytes: 0, names: [] }));
  for (const file of grouped) {
    const lightest = groups.reduce((min, g) => (g.bytes < min.bytes ? g : min));
    lightest.bytes += file.bytes;
    lightest.names.push(file.name);
  }
  return { alone, groups: groups.map((g) => g.names.sort()) };
}

/**
 * Whether Jest's command line has a path pattern into test/ (`test/comments.test.ts`, `test/resource`), not a group's:
 * then the service tier runs its files alone, so that the pattern matches them.
 */
const namesTestFile = (argv) => argv.some((arg) => !arg.startsWith('-') && /(^|\/)test\//.test(arg) && !/test\/groups\b/.test(arg));

module.exports = { GROUP_COUNT, PROCESS_FILES, serviceFiles, namesTestFile };

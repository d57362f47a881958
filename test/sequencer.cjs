// Jest's own order (failed first, then slowest first by the last run's timings, else largest file first), with the
// costliest files ahead when Jest has no timings yet (a fresh clone, as on CI): first the processes tier (the
// longest files), then the files that open embedded PGlite (seconds of CPU each). A long file started last would
// lengthen the whole run while the other workers sit idle.
const Sequencer = require('@jest/test-sequencer').default;

const rank = (test) => {
  if (test.context.config.displayName?.name === 'processes') return 0;
  if (/pglite/i.test(test.path)) return 1;
  return 2;
};

class CostliestFirst extends Sequencer {
  sort(tests) {
    return [...super.sort(tests)].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = CostliestFirst;

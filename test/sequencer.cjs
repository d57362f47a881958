// Jest's own order (failed first, then slowest first by the last run's timings, else largest file first), with two
// changes for a 2-core CI machine:
// - the files of the processes tier (each starts processes of its own: servers, subgraphs, workers, Chromium) are
//   spread over the run, one after every few other files, instead of all at the start: four of them side by side
//   start dozens of processes at once, and their start-up waits time out while the cores are saturated;
// - the files that open embedded PGlite (seconds of CPU each) come before the other service files, then the groups of
//   service files (test/groups.cjs: the longest files of the run), so that a long file does not start last and
//   lengthen the whole run while the other workers sit idle. Without timings from an earlier run (a clean clone), Jest
//   orders by file size, and a group's file is a few lines: it would come last.
const Sequencer = require('@jest/test-sequencer').default;

const isProcesses = (test) => test.context.config.displayName?.name === 'processes';
const isPglite = (test) => /pglite/i.test(test.path);
const isGroup = (test) => /[/\\]test[/\\]groups[/\\]\d+\.test\.ts$/.test(test.path);

class SpreadProcesses extends Sequencer {
  sort(tests) {
    const ordered = [...super.sort(tests)];
    const processes = ordered.filter(isProcesses);
    const others = ordered.filter((t) => !isProcesses(t));
    const rest = [...others.filter(isPglite), ...others.filter(isGroup), ...others.filter((t) => !isPglite(t) && !isGroup(t))];
    // One processes file, then `spacing` others: with 4 workers, one or two processes files run at a time, and the
    // last of them starts two thirds into the list (a long one started at the very end would lengthen the run).
    const spacing = processes.length === 0 ? 0 : Math.max(2, Math.floor((2 / 3) * (rest.length / processes.length)));
    const out = [];
    while (processes.length > 0 || rest.length > 0) {
      if (processes.length > 0) out.push(processes.shift());
      out.push(...rest.splice(0, spacing || rest.length));
    }
    return out;
  }
}

module.exports = SpreadProcesses;

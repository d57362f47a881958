// A Jest reporter that prints, after the run, each tier's time (its files' times added up, and its share of the
// wall time) and the ten slowest files, so that a slow file or a slow tier is seen at the end of every run.
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

class TimingsReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.files = [];
  }

  onTestResult(test, result) {
    const tier = test.context.config.displayName?.name ?? '-';
    this.files.push({ file: test.path.slice(this.rootDir.length + 1), tier, ms: result.perfStats.end - result.perfStats.start });
  }

  onRunComplete(_contexts, results) {
    const wallMs = Date.now() - results.startTime;
    const tiers = new Map();
    for (const f of this.files) {
      const tier = tiers.get(f.tier) ?? { files: 0, ms: 0 };
      tiers.set(f.tier, { files: tier.files + 1, ms: tier.ms + f.ms });
    }
    const lines = [`Jest wall time: ${seconds(wallMs)}`, 'Time by tier (files, their times added up):'];
    for (const [name, tier] of tiers) lines.push(`  ${name.padEnd(10)} ${String(tier.files).padStart(4)} files  ${seconds(tier.ms).padStart(9)}`);
    lines.push('Ten slowest files:');
    for (const f of [...this.files].sort((a, b) => b.ms - a.ms).slice(0, 10)) lines.push(`  ${seconds(f.ms).padStart(8)}  ${f.tier.padEnd(10)} ${f.file}`);
    process.stderr.write(`\n${lines.join('\n')}\n`);
  }
}

module.exports = TimingsReporter;

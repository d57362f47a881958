// `npm run bench`: runs every bench/*.bench.ts in turn (or those named on the command line).
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const mod = (await import(new URL(file, import.meta.url).href)) as { default: () => Promise<void> };
  await mod.default();
}
process.exit(0);

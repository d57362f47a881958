// One group of the service tier's files (test/groups.cjs): the group's number is its test file's name.
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { serviceFiles } = require('../groups.cjs') as { serviceFiles(): { groups: string[][] } };

/** Imports the files of the group that `url` (a group's test file, `NN.test.ts`) names, one after the other. */
export async function runGroup(url: string): Promise<void> {
  const number = Number(basename(fileURLToPath(url)).split('.')[0]);
  const files = serviceFiles().groups[number - 1];
  if (!files) throw new Error(`no group ${number}`);
  for (const name of files) await import(`../${name.replace(/\.ts$/, '.js')}`);
}

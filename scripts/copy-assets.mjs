// Copies the non-TypeScript files the compiled service reads at run time (GraphQL schemas, SQL migrations, contracts).
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['db', 'subgraphs', 'gateway', 'rest-facade', 'jobs'];
const wanted = /\.(graphql|sql|json)$/;
const skip = new Set(['node_modules', 'dist', 'test']);

function walk(dir) {
  for (const name of readdirSync(dir)) {
    if (skip.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (wanted.test(name) && name !== 'package.json') cpSync(path, join('dist', path));
  }
}
for (const root of roots) walk(root);

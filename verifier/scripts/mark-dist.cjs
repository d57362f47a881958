// Tells Node which module format each build is, whatever the package's own "type" says.
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const dist = join(__dirname, '..', 'dist');
writeFileSync(join(dist, 'esm', 'package.json'), JSON.stringify({ type: 'module' }) + '\n');
writeFileSync(join(dist, 'cjs', 'package.json'), JSON.stringify({ type: 'commonjs' }) + '\n');

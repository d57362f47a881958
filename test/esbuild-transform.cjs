// Jest's TypeScript transform: esbuild strips the types of each file (as `tsc` emits it under this repo's tsconfig:
// ES2022 class fields, unused imports dropped), ESM when Jest loads the file as ESM. `npm test` type-checks with tsc
// first, so nothing is lost; ts-jest cost every Jest worker the TypeScript compiler's load and a program per file.
const { createHash } = require('node:crypto');
const { transformSync, version } = require('esbuild');

const tsconfigRaw = { compilerOptions: { target: 'ES2022', useDefineForClassFields: true, verbatimModuleSyntax: false } };

module.exports = {
  process(source, filename, options) {
    const { code, map } = transformSync(source, {
      loader: 'ts',
      format: options.supportsStaticESM ? 'esm' : 'cjs',
      target: 'node20',
      sourcemap: 'external',
      sourcefile: filename,
      tsconfigRaw,
    });
    return { code, map };
  },
  getCacheKey(source, filename, options) {
    return createHash('sha256').update(version).update(JSON.stringify(tsconfigRaw)).update(String(options.supportsStaticESM)).update(filename).update(source).digest('hex');
  },
};

// @ts-check
/**
 * Jest's TypeScript transform, by esbuild (already the dev toolchain's, through tsx).
 * It strips types file by file (the tsconfig's isolatedModules makes that safe); types are
 * checked once by `npm run typecheck` in CI, not in every Jest worker.
 */
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const tsconfig = JSON.parse(readFileSync(path.join(__dirname, '../../tsconfig.json'), 'utf8'));
const OPTIONS = {
  loader: /** @type {const} */ ('ts'),
  format: /** @type {const} */ ('cjs'),
  target: 'node20',
  sourcemap: /** @type {const} */ ('external'),
  // As tsc's CommonJS output: import() becomes require() (Jest's vm has no dynamic import without a flag).
  supported: { 'dynamic-import': false },
  tsconfigRaw: { compilerOptions: { ...tsconfig.compilerOptions, useDefineForClassFields: true } },
};
const VERSION = createHash('sha1').update(`${esbuild.version}\0${JSON.stringify(OPTIONS)}\0${readFileSync(__filename, 'utf8')}`).digest('hex');

module.exports = {
  /** @param {string} source @param {string} filename */
  process(source, filename) {
    const { code, map } = esbuild.transformSync(source, { ...OPTIONS, sourcefile: filename });
    return { code, map };
  },
  /** @param {string} source @param {string} filename */
  getCacheKey(source, filename) {
    return createHash('sha1').update(VERSION).update('\0').update(filename).update('\0').update(source).digest('hex');
  },
};

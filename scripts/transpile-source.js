/**
 * src/ as plain JavaScript, file by file, in src/'s layout under one directory: what `npm run build`
 * puts in dist/ and what a test run starts its workers and APIs from. esbuild strips the types
 * (tsconfig.json's isolatedModules keeps every file transpilable alone); checking them is
 * `npm run typecheck`'s job, which CI runs, so the build does not pay for a second check.
 * The portal's browser code is left out: dist/portal/build.js bundles it.
 *
 * Plain CommonJS, so `node scripts/transpile-source.js <outdir>` runs before anything is compiled.
 */
const { readdirSync } = require('node:fs');
const path = require('node:path');
const { build } = require('esbuild');

const SRC = path.resolve(__dirname, '../src');

/** Every .ts file of src/ (declarations and the portal's browser code aside) into `outdir`. */
async function transpileSource(outdir) {
  const entryPoints = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.startsWith(path.join('portal', 'web')))
    .map((file) => path.join(SRC, file));
  await build({ entryPoints, outdir, outbase: SRC, format: 'cjs', platform: 'node', target: 'node20', sourcemap: 'linked', logLevel: 'error' });
  return outdir;
}

module.exports = { transpileSource };

if (require.main === module) {
  const outdir = process.argv[2];
  if (!outdir) {
    console.error('usage: node scripts/transpile-source.js <outdir>');
    process.exit(2);
  }
  transpileSource(path.resolve(outdir)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The portal's front end as the browser gets it: one script, one stylesheet, one page. */
export interface PortalAssets {
  'index.html': Buffer;
  'portal.js': Buffer;
  'portal.css': Buffer;
}

export const PORTAL_SOURCE_DIR = path.join(__dirname, '..', '..', 'src', 'portal', 'web');
/** Where `npm run build` writes the assets (git-ignored, copied into the image with the rest of dist/). */
export const PORTAL_BUILD_DIR = path.join(__dirname, '..', '..', 'dist', 'portal-web');

/**
 * Bundles src/portal/web with esbuild (a dev dependency: present wherever `npm run build` or
 * `npm start`/tests run from source, absent from the image's runtime, which only reads the output).
 */
export async function buildPortalAssets(sourceDir = PORTAL_SOURCE_DIR): Promise<PortalAssets> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [path.join(sourceDir, 'main.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return {
    'index.html': await readFile(path.join(sourceDir, 'index.html')),
    'portal.js': Buffer.from(result.outputFiles[0].contents),
    'portal.css': await readFile(path.join(sourceDir, 'portal.css')),
  };
}

export async function writePortalAssets(assets: PortalAssets, outDir = PORTAL_BUILD_DIR): Promise<void> {
  await mkdir(outDir, { recursive: true });
  for (const name of Object.keys(assets) as (keyof PortalAssets)[]) await writeFile(path.join(outDir, name), assets[name]);
}

/** `npm run build`: dist/portal/build.js writes the assets next to the compiled server. */
if (require.main === module) {
  buildPortalAssets()
    .then(writePortalAssets)
    .then(() => console.log(`portal built into ${PORTAL_BUILD_DIR}`))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}

import path from 'node:path';
import { buildSync } from 'esbuild';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Segment's mapping kit (`@segment/actions-core`, with liquidjs) renders in the attempt
 * activity and the admin API only. The workflow bundle must not pull it in: it does I/O-free but
 * heavy work, and workflow code must stay deterministic and small. What the bundle holds is read
 * from a bundler's own account of it (esbuild's metafile: every file it took in, packages
 * included, type-only imports left out as in the compiled code).
 */
describe('the delivery workflow bundle', () => {
  it("imports no module of the mapping kit or of src/mappings' rendering", () => {
    const { metafile } = buildSync({ entryPoints: [path.join(ROOT, 'src/workflows/index.ts')], absWorkingDir: ROOT, bundle: true, platform: 'node', write: false, metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(metafile.inputs);
    const files = inputs.filter((input) => input.startsWith('src/')).map((input) => input.slice('src/'.length));
    expect(files.filter((file) => file.startsWith('mappings/') || file.startsWith('activities/'))).toEqual([]);
    expect(inputs.filter((input) => /node_modules\/(@segment\/actions-core|liquidjs)\//.test(input))).toEqual([]);
    expect(files).toContain('delivery/mapping-lanes.ts');
  });
});

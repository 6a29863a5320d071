import path from 'node:path';
import { buildSync } from 'esbuild';
import { SHARED_WORKFLOW_MODULES } from '../../src/temporal/workflow-bundle';

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

  // Shared by every run of the reusable context: a module that imported anything at run time (the
  // workflow SDK above all, which holds a run's state) would carry one run's state into the next.
  it.each(SHARED_WORKFLOW_MODULES.map((file) => [path.relative(ROOT, file)]))('shares %s, which imports nothing at run time', (file) => {
    const { metafile } = buildSync({ entryPoints: [path.join(ROOT, file)], absWorkingDir: ROOT, bundle: true, platform: 'node', write: false, metafile: true, logLevel: 'silent' });
    expect(Object.keys(metafile.inputs)).toEqual([file]);
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { moduleGraph } from '../helpers/module-graph';

const SRC = path.resolve(__dirname, '../../src');

/**
 * Issue 33: Segment's mapping kit (`@segment/actions-core`, with liquidjs) renders in the attempt
 * activity and the admin API only. The workflow bundle must not pull it in: it does I/O-free but
 * heavy work, and workflow code must stay deterministic and small.
 */
describe('the delivery workflow bundle', () => {
  it("imports no module of the mapping kit or of src/mappings' rendering", () => {
    const files = [...moduleGraph(path.join(SRC, 'workflows/index.ts'), { skipTypeImports: true }).keys()].map((file) => path.relative(SRC, file));
    expect(files.filter((file) => file.startsWith('mappings/') || file.startsWith('activities/'))).toEqual([]);
    const kit = files.filter((file) => /@segment\/actions-core|liquidjs/.test(readFileSync(path.join(SRC, file), 'utf8')));
    expect(kit).toEqual([]);
    expect(files).toContain('delivery/mapping-lanes.ts');
  });
});

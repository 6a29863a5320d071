import { readFileSync } from 'node:fs';
import path from 'node:path';
import madge from 'madge';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Issue 33: Segment's mapping kit (`@segment/actions-core`, with liquidjs) renders in the attempt
 * activity and the admin API only. The workflow bundle must not pull it in: it does I/O-free but
 * heavy work, and workflow code must stay deterministic and small.
 */
describe('the delivery workflow bundle', () => {
  it("imports no module of the mapping kit or of src/mappings' rendering", async () => {
    const graph = await madge(path.join(ROOT, 'src/workflows/index.ts'), { fileExtensions: ['ts'], detectiveOptions: { ts: { skipTypeImports: true } } });
    const files = Object.keys(graph.obj());
    expect(files.filter((file) => file.includes('mappings/') || file.includes('activities/'))).toEqual([]);
    const kit = files.filter((file) => /@segment\/actions-core|liquidjs/.test(readFileSync(path.join(ROOT, 'src/workflows', file), 'utf8')));
    expect(kit).toEqual([]);
    expect(files).toContain('../delivery/mapping-lanes.ts');
  });
});

import path from 'node:path';
import madge from 'madge';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Issue 11: no import circles in src/, type-only imports included (a type cycle still ties two
 * layers together: activities must not lean on Temporal client plumbing, nor workflows on it).
 */
describe('the module graph of src/', () => {
  it('has no import cycle', async () => {
    const graph = await madge(path.join(ROOT, 'src'), {
      fileExtensions: ['ts'],
      detectiveOptions: { ts: { skipTypeImports: false } },
    });
    expect(graph.circular()).toEqual([]);
  });
});

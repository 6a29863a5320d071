import path from 'node:path';
import { importCycles, moduleGraph } from '../helpers/module-graph';

const SRC = path.resolve(__dirname, '../../src');

/**
 * No import circles in src/, type-only imports included (a type cycle still ties two
 * layers together: activities must not lean on Temporal client plumbing, nor workflows on it).
 */
describe('the module graph of src/', () => {
  it('has no import cycle', () => {
    const cycles = importCycles(moduleGraph(SRC));
    expect(cycles.map((cycle) => cycle.map((file) => path.relative(SRC, file)))).toEqual([]);
  });

  it('finds a cycle closed by a type-only import', () => {
    const fixture = path.resolve(__dirname, '../fixtures/module-graph');
    expect(importCycles(moduleGraph(fixture)).map((cycle) => cycle.map((file) => path.basename(file)))).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});

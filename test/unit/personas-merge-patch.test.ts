import Database from 'better-sqlite3';
import { mergePatch } from '../../src/personas/merge-patch';
import { MERGE_PATCH_CASES } from '../helpers/personas-merge-patch-cases';

/**
 * Traits merge in TypeScript on both dialects (PostgreSQL has no merge patch). SQLite's json_patch,
 * which the store used before, is the reference: the same result and the same text (key order).
 */
const sqlite = new Database(':memory:');
afterAll(() => sqlite.close());

const withSqlite = (patches: Record<string, unknown>[]) =>
  patches.slice(1).reduce((text, patch) => (sqlite.prepare('SELECT json_patch(?, ?) AS merged').get(text, JSON.stringify(patch)) as { merged: string }).merged, JSON.stringify(patches[0]));

describe('an identify\'s traits are an RFC 7396 merge patch of the profile\'s', () => {
  it.each(MERGE_PATCH_CASES)('%s', (_rule, patches, expected) => {
    const merged = patches.slice(1).reduce<unknown>((traits, patch) => mergePatch(traits, patch), patches[0]);
    expect(merged).toEqual(expected);
    expect(JSON.stringify(merged)).toBe(withSqlite(patches));
  });

  it('kept keys stay in place, new ones come after them, as SQLite\'s json_patch orders them', () => {
    const patches = [{ b: 1, a: 1, c: { y: 1, x: 1 } }, { z: 1, a: 2, c: { w: 1, y: null } }];
    expect(JSON.stringify(mergePatch(patches[0], patches[1]))).toBe('{"b":1,"a":2,"c":{"x":1,"w":1},"z":1}');
    expect(withSqlite(patches)).toBe('{"b":1,"a":2,"c":{"x":1,"w":1},"z":1}');
  });

  it('a trait named __proto__ is a trait like any other', () => {
    const merged = mergePatch(JSON.parse('{"__proto__":{"a":1}}'), JSON.parse('{"__proto__":{"b":2}}')) as Record<string, unknown>;
    expect(JSON.stringify(merged)).toBe('{"__proto__":{"a":1,"b":2}}');
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
  });

  it('a patch that is not an object replaces the target', () => {
    expect(mergePatch({ a: 1 }, [1, 2])).toEqual([1, 2]);
    expect(mergePatch([1], { a: null, b: 1 })).toEqual({ b: 1 });
  });
});

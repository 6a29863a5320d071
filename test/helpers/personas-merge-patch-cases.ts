/** Successive identify traits of one user → the profile's traits (RFC 7396 merge patch). */
export const MERGE_PATCH_CASES: [string, Record<string, unknown>[], Record<string, unknown>][] = [
  ['new traits win, nested objects merge, null removes', [{ plan: 'free', address: { city: 'Oslo' }, nickname: 'x' }, { plan: 'pro', address: { street: 'Main' }, nickname: null }], { plan: 'pro', address: { city: 'Oslo', street: 'Main' } }],
  ['arrays are replaced, not merged', [{ tags: ['a', 'b'], n: 1 }, { tags: ['c'] }], { tags: ['c'], n: 1 }],
  ['a nested null removes a nested key', [{ address: { city: 'Oslo', zip: '0150' } }, { address: { zip: null } }], { address: { city: 'Oslo' } }],
  ['deeply nested objects merge at every level', [{ a: { b: { c: 1, d: 2 } } }, { a: { b: { c: null, e: 3 } } }], { a: { b: { d: 2, e: 3 } } }],
  ['an object replaces a scalar, a scalar or an array replaces an object', [{ a: 1, b: { c: 1 }, d: { e: 1 } }, { a: { x: 1 }, b: 2, d: [1] }], { a: { x: 1 }, b: 2, d: [1] }],
  ['a null inside a new object is dropped', [{ a: 1 }, { o: { x: null, y: 1 } }], { a: 1, o: { y: 1 } }],
  ['null for a trait never set changes nothing', [{ a: 1 }, { b: null }], { a: 1 }],
  ['an empty patch changes nothing', [{ a: 1 }, {}], { a: 1 }],
  ['a removed trait set again comes back', [{ a: 1, b: 2 }, { a: null }, { a: 3 }], { b: 2, a: 3 }],
  ['an empty object merges to no change', [{ o: { x: 1 } }, { o: {} }], { o: { x: 1 } }],
  ['strings, booleans and numbers replace whatever was there', [{ a: 'x', b: true, c: 1.5 }, { a: false, b: 0, c: 'y' }], { a: false, b: 0, c: 'y' }],
];

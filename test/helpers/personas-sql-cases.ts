import { CompiledQuery, type Kysely } from 'kysely';
import { compileAudienceMembers } from '../../src/personas/audience-sql';
import { clearedValue, compileComputedTrait } from '../../src/personas/computed-trait-sql';
import {
  clearComputedTable,
  computedTable,
  createComputedTable,
  dropClearedSnapshots,
  insertJoinedOrChanged,
  insertLeft,
  leftValue,
  stageComputedValues,
  upsertSnapshots,
  type ComputationState,
} from '../../src/personas/snapshot-diff-sql';
import { q, sqlText, type SqlFragment } from '../../src/personas/sql';
import type { ComputedTraitDefinition, Condition } from '../../src/personas/types';
import { dialectOf } from '../../src/store/dialect';
import type { PersonasTables } from '../../src/store/personas-tables';
import type { Tables } from '../../src/store/tables';

/**
 * The Personas SQL cases, one table per rule family, run by the database itself on the real
 * schema: the only honest test of generated SQL is what it selects. Shared by the SQLite run
 * (test/unit, in memory) and the PostgreSQL run (test/integration/personas-postgres.test.ts), so
 * both dialects answer the very same table. Each case is a rule of docs/personas.md.
 */

type Db = Kysely<Tables & PersonasTables>;

/** Runs a builder's fragment the way the store does (placeholders of the database's dialect). */
export async function query<Row = { profile_id: string; value: string }>(db: Kysely<Tables>, fragment: SqlFragment): Promise<Row[]> {
  const result = await db.executeQuery<Row>(CompiledQuery.raw(sqlText(fragment, dialectOf(db)), fragment.params));
  return result.rows;
}

export const NOW = Date.parse('2026-03-31T12:00:00.000Z');
const ago = (days: number) => new Date(NOW - days * 86_400_000).toISOString();

/** Text comparisons are byte order on both dialects: 'Premium' < 'a' (a language collation says otherwise). */
const PROFILES: Record<string, Record<string, unknown>> = {
  ada: { plan: 'Premium', score: 90, beta: true, tags: ['vip', 'early'], email: 'ada@example.test', signup: '2026-01-15T00:00:00.000Z', 'First Name': 'Ada', 'a.b': 1, 'say "hi"': 'yes', ratio: 0.25, nested: { level: 2 } },
  bob: { plan: 'Free', score: 40, beta: false, tags: ['churned', 7, false], email: null, signup: '2025-06-01T00:00:00.000Z', ratio: 1.5 },
  cy: { plan: 'premium', score: '90', tags: 'vip-ish', beta: 'true' },
  dee: {},
};

const EVENTS: [string, string, Record<string, unknown>, string][] = [
  ['ada', 'Order Completed', { total: 60, category: 'shoes' }, ago(1)],
  ['ada', 'Order Completed', { total: 20, category: 'hats' }, ago(10)],
  ['ada', 'Order Completed', { total: 30, category: 'shoes' }, ago(100)],
  ['bob', 'Order Completed', { total: 55.5, category: 'hats' }, ago(2)],
  ['bob', 'Order Completed', { total: '70', category: 'hats' }, ago(3)],
  ['cy', 'Order Completed', { total: 10 }, ago(40)],
  ['cy', 'Product Viewed', { category: 'shoes' }, ago(1)],
  ['dee', 'Product Viewed', { category: null }, ago(1)],
  // most_frequent ties: dee's "a" and "b" twice each, "b" seen last; bob's "a" and "B" stamped the same time.
  ['dee', 'Tie', { c: 'a' }, ago(6)],
  ['dee', 'Tie', { c: 'b' }, ago(5)],
  ['dee', 'Tie', { c: 'a' }, ago(5)],
  ['dee', 'Tie', { c: 'b' }, ago(4)],
  ['bob', 'Tie', { c: 'a' }, ago(4)],
  ['bob', 'Tie', { c: 'B' }, ago(4)],
  // Objects and arrays come back as the JSON text they were sent as, key order kept.
  ['ada', 'Cart', { items: { sku: 'x1', qty: 2, at: [1, 'two', null] } }, ago(2)],
  ['ada', 'Cart', { items: { zeta: true, alpha: { b: 1, a: 2 } } }, ago(1)],
  // Floats whose sum is not exact in binary; avg of integers that is not an integer.
  ['cy', 'Rated', { stars: 0.1 }, ago(3)],
  ['cy', 'Rated', { stars: 0.2 }, ago(2)],
  ['bob', 'Rated', { stars: 4 }, ago(3)],
  ['bob', 'Rated', { stars: 5 }, ago(2)],
  // Same millisecond: the insertion order breaks the tie for first and last.
  ['dee', 'Clicked', { n: 1 }, ago(1)],
  ['dee', 'Clicked', { n: 2 }, ago(1)],
];

/** Profiles and events above in source `src`, plus an `ada` in source `other` with a large order. */
export async function seedPersonas(base: Kysely<Tables>): Promise<void> {
  const db: Db = base.withTables<PersonasTables>();
  const profile = (sourceId: string, id: string, traits: Record<string, unknown>) => ({ source_id: sourceId, profile_id: id, user_id: id, traits: JSON.stringify(traits), created_at: 'now', updated_at: 'now' });
  await db
    .insertInto('profiles')
    .values([...Object.entries(PROFILES).map(([id, traits]) => profile('src', id, traits)), profile('other', 'ada', { plan: 'Premium' })])
    .execute();
  // One row at a time: the insertion order is the id order that breaks timestamp ties.
  for (const [i, [profileId, event, properties, timestamp]] of EVENTS.entries()) {
    await db.insertInto('profile_events').values({ source_id: 'src', profile_id: profileId, message_id: `m${i}`, event, properties: JSON.stringify(properties), timestamp }).execute();
  }
  await db.insertInto('profile_events').values({ source_id: 'other', profile_id: 'ada', message_id: 'o1', event: 'Order Completed', properties: JSON.stringify({ total: 1000 }), timestamp: ago(1) }).execute();
}

export const AUDIENCE_CASES: [string, Condition, string[]][] = [
  ['eq on text is exact and case-sensitive', { trait: 'plan', op: 'eq', value: 'Premium' }, ['ada']],
  ['eq on a number does not match the same digits as text', { trait: 'score', op: 'eq', value: 90 }, ['ada']],
  ['eq on a boolean', { trait: 'beta', op: 'eq', value: false }, ['bob']],
  ['eq on true does not match the text "true"', { trait: 'beta', op: 'eq', value: true }, ['ada']],
  ['eq on a text does not match a number', { trait: 'score', op: 'eq', value: '90' }, ['cy']],
  ['eq on a fraction', { trait: 'ratio', op: 'eq', value: 1.5 }, ['bob']],
  ['neq includes profiles without the trait', { trait: 'plan', op: 'neq', value: 'Premium' }, ['bob', 'cy', 'dee']],
  ['neq of a number includes text digits and missing traits', { trait: 'score', op: 'neq', value: 90 }, ['bob', 'cy', 'dee']],
  ['gt compares numbers', { trait: 'score', op: 'gt', value: 50 }, ['ada']],
  ['gt compares numbers as numbers (40 > 9)', { trait: 'score', op: 'gt', value: 9 }, ['ada', 'bob']],
  ['gte is inclusive', { trait: 'score', op: 'gte', value: 90 }, ['ada']],
  ['lt compares fractions', { trait: 'ratio', op: 'lt', value: 1 }, ['ada']],
  ['lte compares numbers', { trait: 'score', op: 'lte', value: 40 }, ['bob']],
  ['gte compares ISO dates as text', { trait: 'signup', op: 'gte', value: '2026-01-01T00:00:00.000Z' }, ['ada']],
  ['lt with a missing trait is false, not unknown', { trait: 'signup', op: 'lt', value: '2026-01-01T00:00:00.000Z' }, ['bob']],
  ['text compares byte by byte: upper case sorts before lower case', { trait: 'plan', op: 'lt', value: 'a' }, ['ada', 'bob']],
  ['a text value compares as text ("90" > "100")', { trait: 'score', op: 'gt', value: '100' }, ['cy']],
  ['a nested object is no number or text', { trait: 'nested', op: 'gt', value: 1 }, []],
  ['a number compared with text, arrays or booleans is false, never an error', { any: [{ trait: 'plan', op: 'gt', value: 1 }, { trait: 'tags', op: 'lt', value: 1 }, { trait: 'beta', op: 'gte', value: 0 }] }, []],
  ['a text compared with numbers, arrays or booleans is false', { any: [{ trait: 'ratio', op: 'gt', value: '' }, { trait: 'tags', op: 'gt', value: '' }, { trait: 'beta', op: 'gt', value: '' }] }, ['cy']],
  ['exists: present and not null', { trait: 'email', op: 'exists' }, ['ada']],
  ['exists: any type counts, objects too', { trait: 'nested', op: 'exists' }, ['ada']],
  ['contains: an element of an array, or a substring of text', { trait: 'tags', op: 'contains', value: 'vip' }, ['ada', 'cy']],
  ['contains: an element, not a substring of an element', { trait: 'tags', op: 'contains', value: 'chur' }, []],
  ['contains: a number is an array element of that number', { trait: 'tags', op: 'contains', value: 7 }, ['bob']],
  ['contains: a number matches no text element', { trait: 'tags', op: 'contains', value: 1 }, []],
  ['contains: a substring of text', { trait: 'tags', op: 'contains', value: 'vip-' }, ['cy']],
  ['contains: is case-sensitive', { trait: 'tags', op: 'contains', value: 'VIP' }, []],
  ['contains: a boolean element', { trait: 'tags', op: 'contains', value: false }, ['bob']],
  ['contains: a boolean never matches text', { trait: 'tags', op: 'contains', value: true }, []],
  ['contains on a trait that is neither array nor text is false', { trait: 'score', op: 'contains', value: 9 }, []],
  ['trait names with spaces, dots and quotes are one key', { any: [{ trait: 'First Name', op: 'eq', value: 'Ada' }, { trait: 'a.b', op: 'eq', value: 1 }, { trait: 'say "hi"', op: 'eq', value: 'yes' }] }, ['ada']],
  ['a dotted name is a key, not a path', { trait: 'nested.level', op: 'exists' }, []],
  ['not of a missing trait is true', { not: { trait: 'email', op: 'exists' } }, ['bob', 'cy', 'dee']],
  ['not(not(x)) is x', { not: { not: { trait: 'plan', op: 'eq', value: 'Free' } } }, ['bob']],
  ['all', { all: [{ trait: 'score', op: 'exists' }, { trait: 'tags', op: 'exists' }, { not: { trait: 'beta', op: 'eq', value: true } }] }, ['bob', 'cy']],
  ['any', { any: [{ trait: 'plan', op: 'eq', value: 'Free' }, { trait: 'plan', op: 'eq', value: 'premium' }] }, ['bob', 'cy']],
  ['event: did it at least once (default count)', { event: 'Order Completed' }, ['ada', 'bob', 'cy']],
  ['event: within a window', { event: 'Order Completed', within: '30d' }, ['ada', 'bob']],
  ['event: exactly once in the last 30 days', { event: 'Order Completed', count: { op: 'eq', value: 1 }, within: '30d' }, []],
  ['event: exactly twice in the last 30 days', { event: 'Order Completed', count: { op: 'eq', value: 2 }, within: '30d' }, ['ada', 'bob']],
  ['event: more than twice', { event: 'Order Completed', count: { op: 'gt', value: 2 } }, ['ada']],
  ['event: at most two, with none counting', { event: 'Order Completed', count: { op: 'lte', value: 2 } }, ['bob', 'cy', 'dee']],
  ['event: not exactly two', { event: 'Order Completed', count: { op: 'neq', value: 2 } }, ['ada', 'cy', 'dee']],
  ['event: never', { event: 'Order Completed', count: { op: 'eq', value: 0 } }, ['dee']],
  ['event: fewer than 3 ever', { event: 'Order Completed', count: { op: 'lt', value: 3 } }, ['bob', 'cy', 'dee']],
  ['event: where compares the property typed ("70" is text)', { event: 'Order Completed', where: [{ property: 'total', op: 'gt', value: 50 }] }, ['ada', 'bob']],
  ['event: where on text', { event: 'Order Completed', where: [{ property: 'total', op: 'eq', value: '70' }] }, ['bob']],
  ['event: where exists ignores a null property', { event: 'Product Viewed', where: [{ property: 'category', op: 'exists' }] }, ['cy']],
  ['event: where with several conditions is AND', { event: 'Order Completed', where: [{ property: 'total', op: 'gt', value: 25 }, { property: 'category', op: 'eq', value: 'shoes' }], count: { op: 'gte', value: 2 } }, ['ada']],
  ['event and trait together', { all: [{ event: 'Product Viewed', within: '7d' }, { trait: 'plan', op: 'exists' }] }, ['cy']],
];

export const COMPUTED_TRAIT_CASES: [string, ComputedTraitDefinition, Record<string, unknown>][] = [
  ['count', { type: 'count', event: 'Order Completed' }, { ada: 3, bob: 2, cy: 1 }],
  ['count within', { type: 'count', event: 'Order Completed', within: '30d' }, { ada: 2, bob: 2 }],
  ['count with a property counts events that have it', { type: 'count', event: 'Product Viewed', property: 'category' }, { cy: 1 }],
  ['sum reads numbers only ("70" is text)', { type: 'sum', event: 'Order Completed', property: 'total' }, { ada: 110, bob: 55.5, cy: 10 }],
  ['sum within', { type: 'sum', event: 'Order Completed', property: 'total', within: '30d' }, { ada: 80, bob: 55.5 }],
  ['sum of floats is rounded to 6 decimals', { type: 'sum', event: 'Rated', property: 'stars' }, { bob: 9, cy: 0.3 }],
  ['avg', { type: 'avg', event: 'Order Completed', property: 'total' }, { ada: 36.666667, bob: 55.5, cy: 10 }],
  ['avg of integers may be a fraction', { type: 'avg', event: 'Rated', property: 'stars' }, { bob: 4.5, cy: 0.15 }],
  ['min', { type: 'min', event: 'Order Completed', property: 'total' }, { ada: 20, bob: 55.5, cy: 10 }],
  ['max', { type: 'max', event: 'Order Completed', property: 'total' }, { ada: 60, bob: 55.5, cy: 10 }],
  ['a numeric trait of a property no event has is no value', { type: 'sum', event: 'Order Completed', property: 'nope' }, {}],
  ['most_frequent', { type: 'most_frequent', event: 'Order Completed', property: 'category' }, { ada: 'shoes', bob: 'hats' }],
  ['most_frequent breaks a tie by the value seen last, then by the smaller JSON text in byte order', { type: 'most_frequent', event: 'Tie', property: 'c' }, { dee: 'b', bob: 'B' }],
  ['first (any JSON type)', { type: 'first', event: 'Order Completed', property: 'total' }, { ada: 30, bob: '70', cy: 10 }],
  ['last', { type: 'last', event: 'Order Completed', property: 'category' }, { ada: 'shoes', bob: 'hats' }],
  ['first and last break a same-millisecond tie by arrival', { type: 'last', event: 'Clicked', property: 'n' }, { dee: 2 }],
  ['first of a same-millisecond tie', { type: 'first', event: 'Clicked', property: 'n' }, { dee: 1 }],
  ['an object value is sent whole', { type: 'last', event: 'Cart', property: 'items' }, { ada: { zeta: true, alpha: { b: 1, a: 2 } } }],
  ['a null property is no value', { type: 'last', event: 'Product Viewed', property: 'category' }, { cy: 'shoes' }],
];

/** The exact JSON text computed values carry: what the snapshot compares, so both dialects must agree. */
export const COMPUTED_TEXT_CASES: [string, ComputedTraitDefinition, Record<string, string>][] = [
  ['an object keeps its key order and spacing as sent', { type: 'first', event: 'Cart', property: 'items' }, { ada: '{"sku":"x1","qty":2,"at":[1,"two",null]}' }],
  ['nested objects keep their key order', { type: 'last', event: 'Cart', property: 'items' }, { ada: '{"zeta":true,"alpha":{"b":1,"a":2}}' }],
  ['a count is an integer', { type: 'count', event: 'Order Completed' }, { ada: '3', bob: '2', cy: '1' }],
  ['an integer sum has no decimals', { type: 'sum', event: 'Order Completed', property: 'total' }, { ada: '110', bob: '55.5', cy: '10' }],
  ['a string is JSON text', { type: 'last', event: 'Order Completed', property: 'category' }, { ada: '"shoes"', bob: '"hats"' }],
];

/** Runs the audience and computed-trait tables on the database `db()` gives (seeded with seedPersonas). */
export function describeAudiencesAndComputedTraits(db: () => Kysely<Tables>): void {
  const members = async (condition: Condition, sourceId = 'src') =>
    (await query(db(), compileAudienceMembers(dialectOf(db()), sourceId, condition, NOW))).map((r) => r.profile_id).sort();

  describe('audience conditions select exactly the profiles the rules say', () => {
    it.each(AUDIENCE_CASES)('%s', async (_rule, condition, expected) => {
      expect(await members(condition)).toEqual(expected);
    });

    it('never selects another source\'s profiles or counts its events', async () => {
      expect(await members({ event: 'Order Completed', where: [{ property: 'total', op: 'gte', value: 1000 }] })).toEqual([]);
      expect(await members({ trait: 'plan', op: 'eq', value: 'Premium' }, 'other')).toEqual(['ada']);
    });

    it('every member\'s value is the JSON true', async () => {
      const rows = await query(db(), compileAudienceMembers(dialectOf(db()), 'src', { trait: 'plan', op: 'exists' }, NOW));
      expect(rows.map((r) => r.value)).toEqual(['true', 'true', 'true']);
    });

    it('passes every value as a parameter, never in the SQL text', async () => {
      const fragment = compileAudienceMembers(dialectOf(db()), 'src', { all: [{ trait: "x'); DROP TABLE profiles; --", op: 'eq', value: "'; DELETE FROM profiles; --" }, { event: "E'", within: '1d' }] }, NOW);
      expect(fragment.sql).not.toContain('DROP');
      expect(fragment.sql).not.toContain('DELETE');
      expect(await query(db(), fragment)).toEqual([]);
      expect(await members({ trait: 'plan', op: 'exists' })).toEqual(['ada', 'bob', 'cy']);
    });
  });

  describe('computed traits compute each profile\'s value', () => {
    const rows = async (definition: ComputedTraitDefinition) => query(db(), compileComputedTrait(dialectOf(db()), 'src', definition, NOW));

    it.each(COMPUTED_TRAIT_CASES)('%s', async (_rule, definition, expected) => {
      const values = Object.fromEntries((await rows(definition)).map((r) => [r.profile_id, JSON.parse(r.value)]));
      expect(values).toEqual(expected);
    });

    it.each(COMPUTED_TEXT_CASES)('JSON text: %s', async (_rule, definition, expected) => {
      expect(Object.fromEntries((await rows(definition)).map((r) => [r.profile_id, r.value]))).toEqual(expected);
    });

    it('a profile that no longer has a value is sent 0 for a count and null otherwise', () => {
      expect(clearedValue({ type: 'count', event: 'E' })).toBe('0');
      expect(clearedValue({ type: 'sum', event: 'E', property: 'p' })).toBe('null');
      expect(clearedValue({ type: 'last', event: 'E', property: 'p' })).toBe('null');
    });
  });
}

/** ada and bob exist in source `src` (bob only anonymously); cy only in source `other`. */
const USER_IDS: Record<string, string | null> = { ada: 'u-ada', bob: null };
const COMPUTATION = 'aud_1';
const VERSION = 2;

/** Profiles for the diff: seeded on a database with nothing else in `profiles`. */
export async function seedSnapshotProfiles(base: Kysely<Tables>): Promise<void> {
  const db: Db = base.withTables<PersonasTables>();
  const profile = (sourceId: string, id: string, userId: string | null, traits: object) => ({ source_id: sourceId, profile_id: id, user_id: userId, traits: JSON.stringify(traits), created_at: 'now', updated_at: 'now' });
  await db
    .insertInto('profiles')
    .values([...Object.entries(USER_IDS).map(([id, userId]) => profile('src', id, userId, { plan: id === 'ada' ? 'Premium' : 'Free' })), profile('other', 'cy', 'u-cy', {})])
    .execute();
}

export const SNAPSHOT_DIFF_CASES: [string, Record<string, string>, Record<string, string>, string[], Record<string, string>][] = [
  ['the first sync sends every value', {}, { ada: 'true', bob: 'true' }, ['ada: true', 'bob: true'], { ada: 'true', bob: 'true' }],
  ['a profile that joined is sent its value', { ada: 'true' }, { ada: 'true', bob: 'true' }, ['bob: true'], { ada: 'true', bob: 'true' }],
  ['an unchanged value is not sent again', { ada: '3', bob: '1' }, { ada: '3', bob: '1' }, [], { ada: '3', bob: '1' }],
  ['a changed value is sent and becomes the snapshot', { ada: '3' }, { ada: '4' }, ['ada: 4'], { ada: '4' }],
  ['values compare as JSON text: the string "3" is not the number 3', { ada: '3' }, { ada: '"3"' }, ['ada: "3"'], { ada: '"3"' }],
  ['values compare as text, case included', { ada: '"a"' }, { ada: '"A"' }, ['ada: "A"'], { ada: '"A"' }],
  ['a profile that left is sent the left value and leaves the snapshot', { ada: 'true', bob: 'true' }, { ada: 'true' }, ['bob: false (left)'], { ada: 'true' }],
  ['everyone leaving empties the snapshot', { ada: 'true', bob: 'true' }, {}, ['ada: false (left)', 'bob: false (left)'], {}],
  ['joined, left, changed and unchanged in one sync', { ada: '1', bob: '2' }, { ada: '5' }, ['ada: 5', 'bob: false (left)'], { ada: '5' }],
  ['nothing before and nothing now sends nothing', {}, {}, [], {}],
  ['a value for a profile with no profile row is never sent', {}, { ghost: 'true' }, [], {}],
  ['a profile of another source with the same id is never sent', {}, { cy: 'true' }, [], {}],
  ['a snapshot row whose profile is gone counts as left', { ghost: 'true' }, { ghost: 'true' }, ['ghost: false (left)'], {}],
];

/**
 * The Personas diff as the store runs it (values computed now against what the receivers were
 * last told), on the database `db()` gives: seeded with seedSnapshotProfiles, one session (the
 * TEMP staging table lives in it: SQLite in memory has one connection, the PostgreSQL test pool one).
 */
export function describeSnapshotDiff(db: () => Kysely<Tables>): void {
  const run = (statement: SqlFragment) => query(db(), statement);
  const personas = () => db().withTables<PersonasTables>();
  const dialect = () => dialectOf(db());

  beforeAll(async () => {
    await run(createComputedTable);
  });
  beforeEach(async () => {
    await personas().deleteFrom('personas_snapshots').execute();
    await personas().deleteFrom('personas_changes').execute();
    await run(clearComputedTable(dialect()));
  });

  const told = async (computationId: string, values: Record<string, string>) => {
    for (const [profileId, value] of Object.entries(values)) {
      await personas().insertInto('personas_snapshots').values({ computation_id: computationId, profile_id: profileId, source_id: 'src', user_id: USER_IDS[profileId] ?? null, value }).execute();
    }
  };
  const stage = async (values: Record<string, string>) => {
    for (const [profileId, value] of Object.entries(values)) await run(q`INSERT INTO ${computedTable(dialect())} (profile_id, value) VALUES (${profileId}, ${value})`);
  };
  const snapshot = async (computationId: string) =>
    Object.fromEntries(
      (await personas().selectFrom('personas_snapshots').select(['profile_id', 'value']).where('computation_id', '=', computationId).orderBy('profile_id').execute()).map((r) => [r.profile_id, r.value]),
    );

  /** One sync of COMPUTATION: the changes it freezes (`profile: value`, `(left)` when cleared) and the snapshot after commit. */
  async function sync(before: Record<string, string>, now: Record<string, string>, left = 'false') {
    await told(COMPUTATION, before);
    await stage(now);
    await run(insertJoinedOrChanged(dialect(), COMPUTATION, VERSION, 'src'));
    await run(insertLeft(dialect(), COMPUTATION, VERSION, left));
    const rows = await personas().selectFrom('personas_changes').select(['profile_id', 'value', 'cleared']).where('computation_id', '=', COMPUTATION).where('version', '=', VERSION).orderBy('profile_id').execute();
    await run(dropClearedSnapshots(COMPUTATION, VERSION));
    await run(upsertSnapshots(COMPUTATION, VERSION));
    return { changes: rows.map((r) => `${r.profile_id}: ${r.value}${Number(r.cleared) === 1 ? ' (left)' : ''}`), after: await snapshot(COMPUTATION) };
  }

  describe('a sync sends exactly the differences from what receivers were last told', () => {
    it.each(SNAPSHOT_DIFF_CASES)('%s', async (_rule, before, now, changes, after) => {
      expect(await sync(before, now)).toEqual({ changes, after });
    });

    it('a computed trait that lost its value is sent the cleared value', async () => {
      expect(await sync({ ada: '2', bob: '1' }, { ada: '2' }, '0')).toEqual({ changes: ['bob: 0 (left)'], after: { ada: '2' } });
    });

    it('leaves other computations\' snapshots alone', async () => {
      await told('ctr_1', { ada: '7', bob: '1' });
      expect(await sync({}, { ada: 'true' })).toEqual({ changes: ['ada: true'], after: { ada: 'true' } });
      expect(await snapshot('ctr_1')).toEqual({ ada: '7', bob: '1' });
    });

    it('sends a joined or changed profile with its current user id, and the snapshot keeps it', async () => {
      await personas().insertInto('personas_snapshots').values({ computation_id: COMPUTATION, profile_id: 'ada', source_id: 'src', user_id: null, value: '1' }).execute();
      await stage({ ada: '2' });
      await run(insertJoinedOrChanged(dialect(), COMPUTATION, VERSION, 'src'));
      expect(await personas().selectFrom('personas_changes').select(['user_id', 'version', 'cleared']).where('profile_id', '=', 'ada').execute()).toEqual([{ user_id: 'u-ada', version: VERSION, cleared: 0 }]);
      await run(upsertSnapshots(COMPUTATION, VERSION));
      expect(await personas().selectFrom('personas_snapshots').select(['user_id', 'value']).where('profile_id', '=', 'ada').execute()).toEqual([{ user_id: 'u-ada', value: '2' }]);
    });

    it('commit applies only its own version', async () => {
      await told(COMPUTATION, { ada: 'true', bob: 'true' });
      for (const [profileId, value, cleared] of [['ada', 'false', 1], ['cy', 'true', 0]] as const) {
        await personas().insertInto('personas_changes').values({ computation_id: COMPUTATION, version: VERSION + 1, profile_id: profileId, source_id: 'src', user_id: null, value, cleared }).execute();
      }
      await run(dropClearedSnapshots(COMPUTATION, VERSION));
      await run(upsertSnapshots(COMPUTATION, VERSION));
      expect(await snapshot(COMPUTATION)).toEqual({ ada: 'true', bob: 'true' });
    });
  });

  describe('what is computed and what a profile that left is told', () => {
    const audience = (definition: object): ComputationState => ({ kind: 'audience', sourceId: 'src', definition: JSON.stringify(definition) });
    const trait = (definition: object): ComputationState => ({ kind: 'computed_trait', sourceId: 'src', definition: JSON.stringify(definition) });

    it.each<[string, ComputationState, string]>([
      ['an audience member who left is told false', audience({ trait: 'plan', op: 'exists' }), 'false'],
      ['a count with no events left is 0', trait({ type: 'count', event: 'E' }), '0'],
      ['any other computed trait without a value is null', trait({ type: 'last', event: 'E', property: 'p' }), 'null'],
    ])('%s', (_rule, state, expected) => {
      expect(leftValue(state)).toBe(expected);
    });

    it('stages the audience\'s members of its own source as the values computed now', async () => {
      await run(stageComputedValues(dialect(), audience({ trait: 'plan', op: 'eq', value: 'Premium' }), NOW));
      expect(await run(q`SELECT profile_id, value FROM ${computedTable(dialect())} ORDER BY profile_id`)).toEqual([{ profile_id: 'ada', value: 'true' }]);
    });
  });
}

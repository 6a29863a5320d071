import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { compileAudienceMembers } from '../../src/personas/audience-sql';
import { clearedValue, compileComputedTrait } from '../../src/personas/computed-trait-sql';
import type { SqlFragment } from '../../src/personas/sql';
import type { ComputedTraitDefinition, Condition } from '../../src/personas/types';
import type { Tables } from '../../src/store/tables';
import { memoryDatabase } from '../helpers/memory-db';

/**
 * The compilers' output run by SQLite itself (in memory, on the real schema): the only honest test
 * of generated SQL is what it selects. Each case is a rule of docs/personas.md.
 */
const NOW = Date.parse('2026-03-31T12:00:00.000Z');
const ago = (days: number) => new Date(NOW - days * 86_400_000).toISOString();

const PROFILES: Record<string, Record<string, unknown>> = {
  ada: { plan: 'Premium', score: 90, beta: true, tags: ['vip', 'early'], email: 'ada@example.test', signup: '2026-01-15T00:00:00.000Z', 'First Name': 'Ada', 'a.b': 1, 'say "hi"': 'yes' },
  bob: { plan: 'Free', score: 40, beta: false, tags: ['churned'], email: null, signup: '2025-06-01T00:00:00.000Z' },
  cy: { plan: 'premium', score: '90', tags: 'vip-ish' },
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
];

let raw: Database.Database;
let db: Kysely<Tables>;

beforeAll(async () => {
  ({ raw, db } = await memoryDatabase());
  const profile = raw.prepare(`INSERT INTO profiles (source_id, profile_id, user_id, traits, created_at, updated_at) VALUES (?, ?, ?, ?, 'now', 'now')`);
  for (const [id, traits] of Object.entries(PROFILES)) profile.run('src', id, id, JSON.stringify(traits));
  profile.run('other', 'ada', 'ada', JSON.stringify({ plan: 'Premium' }));
  const event = raw.prepare(`INSERT INTO profile_events (source_id, profile_id, message_id, event, properties, timestamp) VALUES (?, ?, ?, ?, ?, ?)`);
  EVENTS.forEach(([profileId, name, properties, timestamp], i) => event.run('src', profileId, `m${i}`, name, JSON.stringify(properties), timestamp));
  event.run('other', 'ada', 'o1', 'Order Completed', JSON.stringify({ total: 1000 }), ago(1));
});
afterAll(async () => {
  await db.destroy();
});

const run = (fragment: SqlFragment) => raw.prepare(fragment.sql).all(...fragment.params) as { profile_id: string; value: string }[];
const members = (condition: Condition) => run(compileAudienceMembers('src', condition, NOW)).map((r) => r.profile_id).sort();

describe('audience conditions select exactly the profiles the rules say', () => {
  it.each<[string, Condition, string[]]>([
    ['eq on text is exact and case-sensitive', { trait: 'plan', op: 'eq', value: 'Premium' }, ['ada']],
    ['eq on a number does not match the same digits as text', { trait: 'score', op: 'eq', value: 90 }, ['ada']],
    ['eq on a boolean', { trait: 'beta', op: 'eq', value: false }, ['bob']],
    ['neq includes profiles without the trait', { trait: 'plan', op: 'neq', value: 'Premium' }, ['bob', 'cy', 'dee']],
    ['gt compares numbers', { trait: 'score', op: 'gt', value: 50 }, ['ada']],
    ['lte compares numbers', { trait: 'score', op: 'lte', value: 40 }, ['bob']],
    ['gte compares ISO dates as text', { trait: 'signup', op: 'gte', value: '2026-01-01T00:00:00.000Z' }, ['ada']],
    ['lt with a missing trait is false, not unknown', { trait: 'signup', op: 'lt', value: '2026-01-01T00:00:00.000Z' }, ['bob']],
    ['exists: present and not null', { trait: 'email', op: 'exists' }, ['ada']],
    ['contains: an element of an array, or a substring of text', { trait: 'tags', op: 'contains', value: 'vip' }, ['ada', 'cy']],
    ['contains: an element, not a substring of an element', { trait: 'tags', op: 'contains', value: 'chur' }, []],
    ['contains: a number is an array element', { trait: 'tags', op: 'contains', value: 1 }, []],
    ['contains: a substring of text', { trait: 'tags', op: 'contains', value: 'vip-' }, ['cy']],
    ['contains: a boolean never matches text', { trait: 'tags', op: 'contains', value: true }, []],
    ['trait names with spaces, dots and quotes are one key', { any: [{ trait: 'First Name', op: 'eq', value: 'Ada' }, { trait: 'a.b', op: 'eq', value: 1 }, { trait: 'say "hi"', op: 'eq', value: 'yes' }] }, ['ada']],
    ['not of a missing trait is true', { not: { trait: 'email', op: 'exists' } }, ['bob', 'cy', 'dee']],
    ['not(not(x)) is x', { not: { not: { trait: 'plan', op: 'eq', value: 'Free' } } }, ['bob']],
    ['all', { all: [{ trait: 'score', op: 'exists' }, { trait: 'tags', op: 'exists' }, { not: { trait: 'beta', op: 'eq', value: true } }] }, ['bob', 'cy']],
    ['any', { any: [{ trait: 'plan', op: 'eq', value: 'Free' }, { trait: 'plan', op: 'eq', value: 'premium' }] }, ['bob', 'cy']],
    ['event: did it at least once (default count)', { event: 'Order Completed' }, ['ada', 'bob', 'cy']],
    ['event: within a window', { event: 'Order Completed', within: '30d' }, ['ada', 'bob']],
    ['event: exactly once in the last 30 days', { event: 'Order Completed', count: { op: 'eq', value: 1 }, within: '30d' }, []],
    ['event: exactly twice in the last 30 days', { event: 'Order Completed', count: { op: 'eq', value: 2 }, within: '30d' }, ['ada', 'bob']],
    ['event: never', { event: 'Order Completed', count: { op: 'eq', value: 0 } }, ['dee']],
    ['event: fewer than 3 ever', { event: 'Order Completed', count: { op: 'lt', value: 3 } }, ['bob', 'cy', 'dee']],
    ['event: where compares the property typed ("70" is text)', { event: 'Order Completed', where: [{ property: 'total', op: 'gt', value: 50 }] }, ['ada', 'bob']],
    ['event: where with several conditions is AND', { event: 'Order Completed', where: [{ property: 'total', op: 'gt', value: 25 }, { property: 'category', op: 'eq', value: 'shoes' }], count: { op: 'gte', value: 2 } }, ['ada']],
    ['event and trait together', { all: [{ event: 'Product Viewed', within: '7d' }, { trait: 'plan', op: 'exists' }] }, ['cy']],
  ])('%s', (_rule, condition, expected) => {
    expect(members(condition)).toEqual(expected);
  });

  it('never selects another source\'s profiles or counts its events', () => {
    expect(members({ event: 'Order Completed', where: [{ property: 'total', op: 'gte', value: 1000 }] })).toEqual([]);
    expect(run(compileAudienceMembers('other', { trait: 'plan', op: 'eq', value: 'Premium' }, NOW)).map((r) => r.profile_id)).toEqual(['ada']);
  });

  it('passes every value as a parameter, never in the SQL text', () => {
    const fragment = compileAudienceMembers('src', { all: [{ trait: "x'); DROP TABLE profiles; --", op: 'eq', value: "'; DELETE FROM profiles; --" }, { event: "E'", within: '1d' }] }, NOW);
    expect(fragment.sql).not.toContain('DROP');
    expect(fragment.sql).not.toContain('DELETE');
    expect(run(fragment)).toEqual([]);
    expect(members({ trait: 'plan', op: 'exists' })).toEqual(['ada', 'bob', 'cy']);
  });
});

describe('computed traits compute each profile\'s value', () => {
  const values = (definition: ComputedTraitDefinition) => Object.fromEntries(run(compileComputedTrait('src', definition, NOW)).map((r) => [r.profile_id, JSON.parse(r.value)]));

  it.each<[string, ComputedTraitDefinition, Record<string, unknown>]>([
    ['count', { type: 'count', event: 'Order Completed' }, { ada: 3, bob: 2, cy: 1 }],
    ['count within', { type: 'count', event: 'Order Completed', within: '30d' }, { ada: 2, bob: 2 }],
    ['sum reads numbers only ("70" is text)', { type: 'sum', event: 'Order Completed', property: 'total' }, { ada: 110, bob: 55.5, cy: 10 }],
    ['sum within', { type: 'sum', event: 'Order Completed', property: 'total', within: '30d' }, { ada: 80, bob: 55.5 }],
    ['avg', { type: 'avg', event: 'Order Completed', property: 'total' }, { ada: 36.666667, bob: 55.5, cy: 10 }],
    ['min', { type: 'min', event: 'Order Completed', property: 'total' }, { ada: 20, bob: 55.5, cy: 10 }],
    ['max', { type: 'max', event: 'Order Completed', property: 'total' }, { ada: 60, bob: 55.5, cy: 10 }],
    ['most_frequent', { type: 'most_frequent', event: 'Order Completed', property: 'category' }, { ada: 'shoes', bob: 'hats' }],
    ['first (any JSON type)', { type: 'first', event: 'Order Completed', property: 'total' }, { ada: 30, bob: '70', cy: 10 }],
    ['last', { type: 'last', event: 'Order Completed', property: 'category' }, { ada: 'shoes', bob: 'hats' }],
    ['a null property is no value', { type: 'last', event: 'Product Viewed', property: 'category' }, { cy: 'shoes' }],
  ])('%s', (_rule, definition, expected) => {
    expect(values(definition)).toEqual(expected);
  });

  it('most_frequent breaks a tie by the value seen last', () => {
    raw.prepare(`INSERT INTO profile_events (source_id, profile_id, message_id, event, properties, timestamp) VALUES ('src', 'dee', 't1', 'Tie', '{"c":"a"}', ?), ('src', 'dee', 't2', 'Tie', '{"c":"b"}', ?)`).run(ago(5), ago(4));
    expect(values({ type: 'most_frequent', event: 'Tie', property: 'c' })).toEqual({ dee: 'b' });
  });

  it('a profile that no longer has a value is sent 0 for a count and null otherwise', () => {
    expect(clearedValue({ type: 'count', event: 'E' })).toBe('0');
    expect(clearedValue({ type: 'sum', event: 'E', property: 'p' })).toBe('null');
    expect(clearedValue({ type: 'last', event: 'E', property: 'p' })).toBe('null');
  });
});

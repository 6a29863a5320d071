import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import {
  clearComputedTable,
  createComputedTable,
  dropClearedSnapshots,
  insertJoinedOrChanged,
  insertLeft,
  leftValue,
  stageComputedValues,
  upsertSnapshots,
  type ComputationState,
} from '../../src/personas/snapshot-diff-sql';
import type { SqlFragment } from '../../src/personas/sql';
import type { Tables } from '../../src/store/tables';
import { memoryDatabase } from '../helpers/memory-db';

/**
 * The Personas diff run by SQLite itself (in memory, on the real schema), as the store runs it:
 * values computed now against what the receivers were last told. Each case is a rule of
 * docs/personas.md (who joined, who left, which value changed).
 */
const COMPUTATION = 'aud_1';
const VERSION = 2;
/** ada and bob exist in source `src` (bob only anonymously); cy only in source `other`. */
const USER_IDS: Record<string, string | null> = { ada: 'u-ada', bob: null };

let raw: Database.Database;
let db: Kysely<Tables>;

beforeAll(async () => {
  ({ raw, db } = await memoryDatabase());
  const profile = raw.prepare(`INSERT INTO profiles (source_id, profile_id, user_id, traits, created_at, updated_at) VALUES (?, ?, ?, ?, 'now', 'now')`);
  for (const [id, userId] of Object.entries(USER_IDS)) profile.run('src', id, userId, JSON.stringify({ plan: id === 'ada' ? 'Premium' : 'Free' }));
  profile.run('other', 'cy', 'u-cy', '{}');
  run(createComputedTable);
});
afterAll(async () => {
  await db.destroy();
});
beforeEach(() => {
  raw.exec('DELETE FROM personas_snapshots; DELETE FROM personas_changes');
  run(clearComputedTable);
});

const run = (statement: SqlFragment) => raw.prepare(statement.sql).run(...statement.params);

const told = (computationId: string, values: Record<string, string>) => {
  const insert = raw.prepare(`INSERT INTO personas_snapshots (computation_id, profile_id, source_id, user_id, value) VALUES (?, ?, 'src', ?, ?)`);
  for (const [profileId, value] of Object.entries(values)) insert.run(computationId, profileId, USER_IDS[profileId] ?? null, value);
};

const snapshot = (computationId: string) =>
  Object.fromEntries(
    (raw.prepare(`SELECT profile_id, value FROM personas_snapshots WHERE computation_id = ? ORDER BY profile_id`).all(computationId) as { profile_id: string; value: string }[]).map((r) => [r.profile_id, r.value]),
  );

/** One sync of COMPUTATION: the changes it freezes (`profile: value`, `(left)` when cleared) and the snapshot after commit. */
function sync(before: Record<string, string>, now: Record<string, string>, left = 'false') {
  told(COMPUTATION, before);
  const stage = raw.prepare(`INSERT INTO temp.personas_computed (profile_id, value) VALUES (?, ?)`);
  for (const [profileId, value] of Object.entries(now)) stage.run(profileId, value);
  run(insertJoinedOrChanged(COMPUTATION, VERSION, 'src'));
  run(insertLeft(COMPUTATION, VERSION, left));
  const rows = raw
    .prepare(`SELECT profile_id, value, cleared FROM personas_changes WHERE computation_id = ? AND version = ? ORDER BY profile_id`)
    .all(COMPUTATION, VERSION) as { profile_id: string; value: string; cleared: number }[];
  run(dropClearedSnapshots(COMPUTATION, VERSION));
  run(upsertSnapshots(COMPUTATION, VERSION));
  return { changes: rows.map((r) => `${r.profile_id}: ${r.value}${r.cleared ? ' (left)' : ''}`), after: snapshot(COMPUTATION) };
}

describe('a sync sends exactly the differences from what receivers were last told', () => {
  it.each<[string, Record<string, string>, Record<string, string>, string[], Record<string, string>]>([
    ['the first sync sends every value', {}, { ada: 'true', bob: 'true' }, ['ada: true', 'bob: true'], { ada: 'true', bob: 'true' }],
    ['a profile that joined is sent its value', { ada: 'true' }, { ada: 'true', bob: 'true' }, ['bob: true'], { ada: 'true', bob: 'true' }],
    ['an unchanged value is not sent again', { ada: '3', bob: '1' }, { ada: '3', bob: '1' }, [], { ada: '3', bob: '1' }],
    ['a changed value is sent and becomes the snapshot', { ada: '3' }, { ada: '4' }, ['ada: 4'], { ada: '4' }],
    ['values compare as JSON text: the string "3" is not the number 3', { ada: '3' }, { ada: '"3"' }, ['ada: "3"'], { ada: '"3"' }],
    ['a profile that left is sent the left value and leaves the snapshot', { ada: 'true', bob: 'true' }, { ada: 'true' }, ['bob: false (left)'], { ada: 'true' }],
    ['everyone leaving empties the snapshot', { ada: 'true', bob: 'true' }, {}, ['ada: false (left)', 'bob: false (left)'], {}],
    ['nothing before and nothing now sends nothing', {}, {}, [], {}],
    ['a value for a profile with no profile row is never sent', {}, { ghost: 'true' }, [], {}],
    ['a profile of another source with the same id is never sent', {}, { cy: 'true' }, [], {}],
    ['a snapshot row whose profile is gone counts as left', { ghost: 'true' }, { ghost: 'true' }, ['ghost: false (left)'], {}],
  ])('%s', (_rule, before, now, changes, after) => {
    expect(sync(before, now)).toEqual({ changes, after });
  });

  it('a computed trait that lost its value is sent the cleared value', () => {
    expect(sync({ ada: '2', bob: '1' }, { ada: '2' }, '0')).toEqual({ changes: ['bob: 0 (left)'], after: { ada: '2' } });
  });

  it('leaves other computations\' snapshots alone', () => {
    told('ctr_1', { ada: '7', bob: '1' });
    expect(sync({}, { ada: 'true' })).toEqual({ changes: ['ada: true'], after: { ada: 'true' } });
    expect(snapshot('ctr_1')).toEqual({ ada: '7', bob: '1' });
  });

  it('sends a joined or changed profile with its current user id, and the snapshot keeps it', () => {
    raw.prepare(`INSERT INTO personas_snapshots (computation_id, profile_id, source_id, user_id, value) VALUES (?, 'ada', 'src', NULL, '1')`).run(COMPUTATION);
    run(clearComputedTable);
    raw.prepare(`INSERT INTO temp.personas_computed (profile_id, value) VALUES ('ada', '2')`).run();
    run(insertJoinedOrChanged(COMPUTATION, VERSION, 'src'));
    expect(raw.prepare(`SELECT user_id FROM personas_changes WHERE profile_id = 'ada'`).get()).toEqual({ user_id: 'u-ada' });
    run(upsertSnapshots(COMPUTATION, VERSION));
    expect(raw.prepare(`SELECT user_id, value FROM personas_snapshots WHERE profile_id = 'ada'`).get()).toEqual({ user_id: 'u-ada', value: '2' });
  });

  it('commit applies only its own version', () => {
    const insert = raw.prepare(`INSERT INTO personas_changes (computation_id, version, profile_id, source_id, user_id, value, cleared) VALUES (?, ?, ?, 'src', NULL, ?, ?)`);
    told(COMPUTATION, { ada: 'true', bob: 'true' });
    insert.run(COMPUTATION, VERSION + 1, 'ada', 'false', 1);
    insert.run(COMPUTATION, VERSION + 1, 'cy', 'true', 0);
    run(dropClearedSnapshots(COMPUTATION, VERSION));
    run(upsertSnapshots(COMPUTATION, VERSION));
    expect(snapshot(COMPUTATION)).toEqual({ ada: 'true', bob: 'true' });
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

  it('stages the audience\'s members of its own source as the values computed now', () => {
    run(stageComputedValues(audience({ trait: 'plan', op: 'eq', value: 'Premium' }), Date.parse('2026-03-31T12:00:00.000Z')));
    expect(raw.prepare(`SELECT profile_id, value FROM temp.personas_computed ORDER BY profile_id`).all()).toEqual([{ profile_id: 'ada', value: 'true' }]);
  });
});

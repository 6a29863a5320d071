import type { TrackingPlanRule } from '../../src/store/types';
import { compilePlanInSlices } from '../../src/plans/compile-plan';
import { sourcePlanReader } from '../../src/plans/plan-reader';

/**
 * Plans are compiled at save's pace, never all at once on the ingest path: a change compiles in
 * slices that yield to the event loop, a large plan's previous revision serves until the new one
 * is ready, and only the newest revision of each plan is kept.
 */
const AT = '2026-05-04T09:30:00.000Z';
const rulesFor = (count: number, type: string): TrackingPlanRule[] =>
  Array.from({ length: count }, (_, i) => ({ type: 'TRACK', key: `Event ${i}`, version: 1, jsonSchema: { properties: { properties: { properties: { total: { type } } } } }, createdAt: AT, updatedAt: AT }));

/** A store of one plan on one source whose rules and revision the test changes. */
function planStore(rules: TrackingPlanRule[]) {
  const state = { revision: 1, rules, reads: 0 };
  return {
    state,
    plans: {
      forSource: async () => ({ plan: { id: 'tp_1', name: 'P', revision: state.revision } }),
      allRules: async () => {
        state.reads++;
        return state.rules;
      },
    },
  };
}

const typeOfTotal = (plan: Awaited<ReturnType<ReturnType<typeof sourcePlanReader>>>['plan']) =>
  plan!.rules.get('TRACK')!.get('Event 0')![0].check({ type: 'track', properties: { total: 1 } }).length === 0 ? 'number' : 'string';

it('compiles a plan in slices, letting the event loop run between them', async () => {
  let turns = 0;
  const tick = setInterval(() => turns++, 0);
  try {
    // A clock that says each rule took 5 ms: the compile yields every other rule, however fast this machine is.
    let clock = 0;
    const plan = await compilePlanInSlices({ id: 'tp_s', name: 'S' }, rulesFor(40, 'number'), {}, () => (clock += 5));
    expect(plan.rules.get('TRACK')!.size).toBe(40);
  } finally {
    clearInterval(tick);
  }
  expect(turns).toBeGreaterThan(0);
});

it('serves a large plan\'s previous revision while the new one compiles, then the new one', async () => {
  const { state, plans } = planStore(rulesFor(12, 'number'));
  // A plan over 10 rules counts as large here (100 in production): the same path, fewer compiles.
  const reader = sourcePlanReader(plans, undefined, 10);
  expect(typeOfTotal((await reader('src_1')).plan)).toBe('number');
  state.rules = rulesFor(12, 'string');
  state.revision = 2;
  // The change is seen, and the call is decided by the revision already compiled.
  expect(typeOfTotal((await reader('src_1')).plan)).toBe('number');
  const deadline = Date.now() + 30_000;
  while (typeOfTotal((await reader('src_1')).plan) === 'number' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(typeOfTotal((await reader('src_1')).plan)).toBe('string');
  // One compile per revision, however many calls asked meanwhile.
  expect(state.reads).toBe(2);
});

it('waits for a small plan\'s change, so the next call is decided by it', async () => {
  const { state, plans } = planStore(rulesFor(3, 'number'));
  const reader = sourcePlanReader(plans);
  expect(typeOfTotal((await reader('src_1')).plan)).toBe('number');
  state.rules = rulesFor(3, 'string');
  state.revision = 2;
  expect(typeOfTotal((await reader('src_1')).plan)).toBe('string');
});

it('reports a saved rule that no longer passes the boundary, once per revision, and leaves it out', async () => {
  const { plans } = planStore([...rulesFor(1, 'number'), { type: 'COMMON', version: 1, jsonSchema: { allOf: [{ $ref: '#' }] }, createdAt: AT, updatedAt: AT }]);
  const warnings: string[] = [];
  const reader = sourcePlanReader(plans, (message) => warnings.push(message));
  const { plan } = await reader('src_1');
  await reader('src_1');
  expect(plan!.rules.has('COMMON')).toBe(false);
  expect(warnings).toEqual([expect.stringContaining('a saved rule does not compile and is skipped (COMMON  v1): /allOf/0/$ref: `$ref` must point inside the rule')]);
});

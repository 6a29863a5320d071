import fc from 'fast-check';
import type { MessageBody } from '../../src/delivery/types';
import { compilePlan } from '../../src/plans/compile-plan';
import { decidePlan } from '../../src/plans/plan-decision';
import { TRACK_COMMON, TRAITS_COMMON, type SchemaControls } from '../../src/plans/schema-controls';

/**
 * Privacy by construction: whatever the controls and the event, the plan's decision
 * never changes its input, an omitted name is gone from what goes on, `context.protocols.omitted`
 * and the violations carry names and rules only (never a value), and what is kept is kept as it
 * was. FC_SEED replays a failure; the seed is printed.
 */
const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : process.env.CI ? 4242 : Date.now() % 2 ** 31;
const RUNS = Number(process.env.FC_RUNS ?? 250);

beforeAll(() => {
  console.log(`plan-decision property test: FC_SEED=${SEED} (FC_RUNS=${RUNS}) replays this run`);
});

const AT = '2026-05-04T09:30:00.000Z';
const schema = (jsonSchema: Record<string, unknown>) => ({ $schema: 'http://json-schema.org/draft-07/schema#', labels: {}, ...jsonSchema });
const plan = compilePlan({ id: 'tp_p', name: 'P' }, [
  { type: 'TRACK', key: 'Order Completed', version: 1, jsonSchema: schema({ properties: { properties: { properties: { order_id: { type: 'string', pattern: '^o-' }, total: { type: 'number' }, coupon: { type: 'string' } }, required: ['order_id'] } } }), createdAt: AT, updatedAt: AT },
  { type: 'COMMON', version: 1, jsonSchema: schema({ properties: { properties: { properties: { total: { minimum: 0 } } }, traits: { properties: { age: { type: 'integer' } } } } }), createdAt: AT, updatedAt: AT },
  { type: 'IDENTIFY', version: 1, jsonSchema: schema({ properties: { traits: { properties: { email: { type: 'string', format: 'email' }, age: { type: 'integer' } } } } }), createdAt: AT, updatedAt: AT },
]);

const track = fc.record({ allowUnplannedEvents: fc.boolean(), allowUnplannedEventProperties: fc.boolean(), allowEventOnViolations: fc.boolean(), allowPropertiesOnViolations: fc.boolean(), commonEventOnViolations: fc.constantFrom(...TRACK_COMMON) });
const traits = fc.record({ allowUnplannedTraits: fc.boolean(), allowTraitsOnViolations: fc.boolean(), commonEventOnViolations: fc.constantFrom(...TRAITS_COMMON) });
const controls: fc.Arbitrary<SchemaControls> = fc.record({ track, identify: traits, group: traits });

/** Every value a marker no name can be, so a value found in names or violations is a leak. */
let marker = 0;
const value = fc.oneof(
  fc.constant(null).map(() => `VAL-${marker++}`),
  fc.constantFrom('o-1', 'a@example.com').map((v) => `${v}VAL-${marker++}`),
  fc.integer().map((n) => n),
);
const name = fc.constantFrom('order_id', 'total', 'coupon', 'extra', 'email', 'age', '__proto__', 'constructor', 'nested');
const section = fc.dictionary(name, value, { maxKeys: 6 });
const event = fc.oneof(
  fc.record({ type: fc.constant('track' as const), event: fc.constantFrom('Order Completed', 'Order Complete'), properties: section }),
  fc.record({ type: fc.constant('identify' as const), traits: section }),
);

describe('the plan decision, under any controls and any event', () => {
  it('never changes its input, removes what it omits, lists names only, and keeps the rest as it was', () => {
    fc.assert(
      fc.property(controls, event, (c, fields) => {
        const body = { ...fields, messageId: 'm', userId: 'u', context: { protocols: { event_version: 1 } } } as MessageBody;
        const before = JSON.stringify(body);
        const verdict = decidePlan(body, plan, c);
        expect(JSON.stringify(body)).toBe(before);
        const key = body.type === 'track' ? 'properties' : 'traits';
        const given = body[key] as Record<string, unknown>;
        // Names and rules, never values.
        expect(JSON.stringify([verdict.omitted, verdict.violations])).not.toMatch(/VAL-/);
        if (verdict.status === 'blocked') {
          expect(verdict.body).toBe(body);
          return;
        }
        const kept = verdict.body[key] as Record<string, unknown>;
        for (const omitted of verdict.omitted) {
          const [at, field] = omitted.split('.');
          expect(at).toBe(key);
          expect(Object.hasOwn(given, field)).toBe(true);
          expect(Object.hasOwn(kept, field)).toBe(false);
        }
        for (const [field, v] of Object.entries(kept)) expect(v).toBe(given[field]);
        if (verdict.status === 'omitted') expect((verdict.body.context as { protocols: { omitted: string[] } }).protocols.omitted).toEqual(verdict.omitted);
        else expect(verdict.body).toBe(body);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

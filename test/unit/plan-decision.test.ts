import type { MessageBody } from '../../src/delivery/types';
import { compilePlan } from '../../src/plans/compile-plan';
import { decidePlan, type PlanVerdict } from '../../src/plans/plan-decision';
import { DEFAULT_CONTROLS, patchControls, TRACK_COMMON, type SchemaControls, type TrackControls } from '../../src/plans/schema-controls';
import type { TrackingPlanRule } from '../../src/store/types';

/** The plan's one decision, in its documented order, every track setting on its own. */

const AT = '2026-05-04T09:30:00.000Z';
const rule = (type: string, key: string | undefined, version: number, jsonSchema: Record<string, unknown>): TrackingPlanRule => ({
  type,
  ...(key !== undefined && { key }),
  version,
  jsonSchema: { $schema: 'http://json-schema.org/draft-07/schema#', labels: {}, ...jsonSchema },
  createdAt: AT,
  updatedAt: AT,
});

const orderV1 = rule('TRACK', 'Order Completed', 1, {
  properties: { properties: { type: 'object', properties: { order_id: { type: 'string' }, total: { type: 'number' }, coupon: { type: 'string' } }, required: ['order_id'] } },
});
const orderV2 = rule('TRACK', 'Order Completed', 2, {
  properties: { properties: { type: 'object', properties: { order_id: { type: 'string' }, total: { type: 'number' }, coupon: { type: 'string' }, channel: { type: 'string' } }, required: ['order_id', 'channel'] } },
});
const common = rule('COMMON', undefined, 1, { properties: { properties: { type: 'object', properties: { total: { type: 'number', minimum: 0 } } } } });
const identify = rule('IDENTIFY', undefined, 1, { properties: { traits: { type: 'object', properties: { email: { type: 'string', format: 'email' } } } } });
const plan = compilePlan({ id: 'tp_1', name: 'Shop' }, [orderV1, orderV2, common, identify]);

const track = (event: string, properties: Record<string, unknown>, context: Record<string, unknown> = {}): MessageBody => ({ type: 'track', messageId: 'm1', userId: 'u1', event, properties, context });

const controls = (track: Partial<TrackControls>): SchemaControls => patchControls(DEFAULT_CONTROLS, { track });
const summary = (verdict: PlanVerdict) => ({ status: verdict.status, decidedBy: verdict.decidedBy, omitted: verdict.omitted });

describe('decidePlan: the defaults report and never change anything', () => {
  it('passes an unplanned event, unplanned properties and violations unchanged, each violation recorded with its stage', () => {
    const body = track('Order Completed', { total: -1, extra: 'x' });
    const verdict = decidePlan(body, plan, DEFAULT_CONTROLS);
    expect(verdict.status).toBe('passed');
    expect(verdict.body).toBe(body);
    expect(verdict.violations.map((v) => [v.stage, v.violationType, v.field])).toEqual([
      ['unplanned-properties', 'Unplanned-Property', 'properties.extra'],
      ['rule-violations', 'Required', 'properties.order_id'],
      ['common-violations', 'Range', 'properties.total'],
    ]);
    expect(decidePlan(track('Order Complete', {}), plan, DEFAULT_CONTROLS)).toMatchObject({ status: 'passed', violations: [{ violationType: 'Unplanned-Event', field: 'event' }] });
  });

  it('leaves a source without a plan, and alias calls, alone', () => {
    const body = track('Anything', { a: 1 });
    expect(decidePlan(body, undefined, controls({ allowUnplannedEvents: false }))).toEqual({ status: 'passed', violations: [], omitted: [], body });
  });
});

/**
 * Every combination of the four track switches and the three common settings (2^4 × 3 = 48, which
 * covers the 2^5 of two common settings), over four messages that each trip one stage, and one
 * that trips them all. The expected verdict is written from the documented order, not from the code.
 */
describe('decidePlan: every combination of the track settings, each applying on its own', () => {
  const combos: TrackControls[] = [];
  for (const allowUnplannedEvents of [true, false])
    for (const allowUnplannedEventProperties of [true, false])
      for (const allowEventOnViolations of [true, false])
        for (const allowPropertiesOnViolations of [true, false])
          for (const commonEventOnViolations of TRACK_COMMON) combos.push({ allowUnplannedEvents, allowUnplannedEventProperties, allowEventOnViolations, allowPropertiesOnViolations, commonEventOnViolations });

  const messages = {
    unplannedEvent: track('Order Complete', { order_id: 'o1' }),
    unplannedProperty: track('Order Completed', { order_id: 'o1', extra: 'x' }),
    ruleViolation: track('Order Completed', { order_id: 1 }),
    commonViolation: track('Order Completed', { order_id: 'o1', total: -5 }),
    everything: track('Order Completed', { order_id: 1, extra: 'x', total: -5 }),
  };

  /** The documented order: unplanned event → unplanned properties → rule violations → common violations. */
  function expected(c: TrackControls, name: keyof typeof messages) {
    if (name === 'unplannedEvent') return c.allowUnplannedEvents ? { status: 'passed', omitted: [] } : { status: 'blocked', decidedBy: 'unplanned-event', omitted: [] };
    const omitted: string[] = [];
    let decidedBy: string | undefined;
    const omit = (field: string, stage: string) => {
      omitted.push(field);
      decidedBy ??= stage;
    };
    const hasUnplanned = name === 'unplannedProperty' || name === 'everything';
    const hasRule = name === 'ruleViolation' || name === 'everything';
    const hasCommon = name === 'commonViolation' || name === 'everything';
    if (hasUnplanned && !c.allowUnplannedEventProperties) omit('properties.extra', 'unplanned-properties');
    if (hasRule && !c.allowEventOnViolations) return { status: 'blocked', decidedBy: 'rule-violations', omitted: [] };
    if (hasRule && !c.allowPropertiesOnViolations) omit('properties.order_id', 'rule-violations');
    if (hasCommon && c.commonEventOnViolations === 'BLOCK') return { status: 'blocked', decidedBy: 'common-violations', omitted: [] };
    if (hasCommon && c.commonEventOnViolations === 'OMIT_PROPERTIES') omit('properties.total', 'common-violations');
    return omitted.length > 0 ? { status: 'omitted', decidedBy, omitted } : { status: 'passed', omitted: [] };
  }

  const cases = combos.flatMap((c) => (Object.keys(messages) as Array<keyof typeof messages>).map((name) => [JSON.stringify(c), name, c] as const));
  it.each(cases)('%s: %s', (_label, name, c) => {
    const verdict = decidePlan(messages[name], plan, controls(c));
    expect(summary(verdict)).toEqual(expected(c, name));
    // Omission removes names, lists names only, and never changes the input.
    if (verdict.status === 'omitted') {
      for (const field of verdict.omitted) expect(Object.hasOwn(verdict.body.properties as object, field.split('.')[1])).toBe(false);
      expect((verdict.body.context as { protocols: { omitted: string[] } }).protocols.omitted).toEqual(verdict.omitted);
    }
    if (verdict.status === 'blocked') expect(verdict.body).toBe(messages[name]);
  });
});

describe('decidePlan: versions, traits', () => {
  it('validates against context.protocols.event_version when the rule has it, else the oldest', () => {
    const body = (version?: unknown) => track('Order Completed', { order_id: 'o1' }, version === undefined ? {} : { protocols: { event_version: version } });
    expect(decidePlan(body(), plan, DEFAULT_CONTROLS)).toMatchObject({ validatedVersion: 1, violations: [] });
    expect(decidePlan(body(2), plan, DEFAULT_CONTROLS)).toMatchObject({ validatedVersion: 2, violations: [{ violationType: 'Required', field: 'properties.channel' }] });
    expect(decidePlan(body(7), plan, DEFAULT_CONTROLS)).toMatchObject({ validatedVersion: 1 });
    expect(decidePlan(body('2'), plan, DEFAULT_CONTROLS)).toMatchObject({ validatedVersion: 1 });
  });

  it('omits unplanned and violating traits of an identify under its own controls', () => {
    const body: MessageBody = { type: 'identify', messageId: 'm2', userId: 'u1', traits: { email: 'not an email', plan: 'pro' }, context: {} };
    const identifyControls = patchControls(DEFAULT_CONTROLS, { identify: { allowUnplannedTraits: false, allowTraitsOnViolations: false } });
    const verdict = decidePlan(body, plan, identifyControls);
    expect(summary(verdict)).toEqual({ status: 'omitted', decidedBy: 'unplanned-properties', omitted: ['traits.plan', 'traits.email'] });
    expect(verdict.body.traits).toEqual({});
    expect(verdict.violations.map((v) => v.violationType)).toEqual(['Unplanned-Property', 'Format']);
  });

  it('names values never: a description carries field names and rules only', () => {
    const verdict = decidePlan(track('Order Completed', { order_id: 'secret-value-123', total: 'also-secret' }), plan, DEFAULT_CONTROLS);
    expect(JSON.stringify(verdict.violations)).not.toContain('secret');
    expect(verdict.violations).toContainEqual(expect.objectContaining({ violationType: 'Datatype', field: 'properties.total', description: 'properties.total must be a number' }));
  });
});

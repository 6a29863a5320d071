import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MessageBody } from '../../src/delivery/types';
import { decisionFlags, FATE_AT_DESTINATIONS, FATE_KINDS, FATE_READERS, fateOf, sees, type FateKind, type FateReader } from '../../src/messages/call-fate';
import { decideCallPlan } from '../../src/messages/plan-calls';
import { consentUpdate, profileUpdates } from '../../src/personas/profile-updates';
import { compilePlan } from '../../src/plans/compile-plan';
import { DEFAULT_CONTROLS, patchControls } from '../../src/plans/schema-controls';
import { decideDelivery } from '../../src/rules/delivery-decision';
import { CONSENT_PREFERENCE_EVENT } from '../../src/rules/consent';
import type { TrackingPlanRule } from '../../src/store/types';
import { acceptCall } from '../../src/messages/accept-calls';

/** One fate per call, and one table of who sees which fate (docs/privacy.md "What happens to a call: its fate"). */

describe('fateOf: one fate from the suppression and the plan verdict', () => {
  it.each([
    ['no plan', false, undefined, { kind: 'accepted', omitted: [] }],
    ['passed', false, { status: 'passed' as const, omitted: [] }, { kind: 'accepted', omitted: [] }],
    ['omitted', false, { status: 'omitted' as const, omitted: ['properties.coupon'] }, { kind: 'omitted', omitted: ['properties.coupon'] }],
    ['blocked', false, { status: 'blocked' as const, omitted: [] }, { kind: 'blocked', omitted: [] }],
    ['a consent change the plan would block', false, { status: 'passed' as const, omitted: [], exemptFromBlock: 'consent-change' as const }, { kind: 'accepted', omitted: [], exemptFromBlock: 'consent-change' }],
    ['suppressed, no plan', true, undefined, { kind: 'suppressed', omitted: [] }],
    ['suppressed and blocked: suppression comes first', true, { status: 'blocked' as const, omitted: [] }, { kind: 'suppressed', omitted: [] }],
    ['suppressed and omitted', true, { status: 'omitted' as const, omitted: ['traits.age'] }, { kind: 'suppressed', omitted: [] }],
  ])('%s', (_, suppressed, verdict, fate) => {
    expect(fateOf(suppressed, verdict)).toEqual(fate);
  });
});

describe('FATE_READERS: who sees which fate', () => {
  const expected: Record<FateReader, Record<FateKind, boolean>> = {
    profiles: { accepted: true, omitted: true, blocked: false, suppressed: false },
    consent: { accepted: true, omitted: true, blocked: true, suppressed: false },
    seenUsers: { accepted: true, omitted: true, blocked: true, suppressed: false },
    archive: { accepted: true, omitted: true, blocked: true, suppressed: false },
    violations: { accepted: true, omitted: true, blocked: true, suppressed: false },
    forwardBlocked: { accepted: false, omitted: false, blocked: true, suppressed: false },
    forwardViolations: { accepted: true, omitted: true, blocked: true, suppressed: false },
    overview: { accepted: true, omitted: true, blocked: true, suppressed: true },
  };
  it.each(Object.entries(expected).flatMap(([reader, row]) => Object.entries(row).map(([kind, yes]) => [reader, kind, yes] as [FateReader, FateKind, boolean])))('%s sees %s: %s', (reader, kind, yes) => {
    expect(sees(reader, { kind })).toBe(yes);
  });

  it('a blocked call is kept wherever its user must be reachable, and goes nowhere else', () => {
    // What a DELETE regulation needs: the archive keeps it, so its user is seen and its consent is kept.
    for (const kind of FATE_KINDS) if (sees('archive', { kind })) expect([sees('seenUsers', { kind }), sees('consent', { kind })]).toEqual([true, true]);
  });

  it('tells each destination decision the stop of a blocked or suppressed call, and nothing for the others', () => {
    const destination = { consent: { categories: [], whenAbsent: 'deliver' as const }, filters: [] };
    const body: MessageBody = { type: 'track', messageId: 'm', userId: 'u', event: 'E', properties: {}, context: {} };
    const decided = Object.fromEntries(FATE_KINDS.map((kind) => [kind, decideDelivery({ body, integrations: undefined, destination, ...decisionFlags({ kind }) })]));
    expect(decided).toEqual({ accepted: { send: body }, omitted: { send: body }, blocked: { stop: 'plan' }, suppressed: { stop: 'suppressed' } });
    expect(FATE_AT_DESTINATIONS).toEqual({ accepted: 'decide', omitted: 'decide', blocked: 'plan', suppressed: 'suppressed' });
  });
});

describe('docs/privacy.md holds the same table', () => {
  const doc = readFileSync(join(__dirname, '../../docs/privacy.md'), 'utf8');
  const start = doc.indexOf('<!-- fate-table');
  const rows = doc
    .slice(start)
    .split('\n')
    .slice(1)
    .filter((line, i, lines) => line.startsWith('|') && lines.slice(0, i).every((l) => l.startsWith('|')))
    .slice(2)
    .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));
  const readerOfRow: Array<FateReader | 'destinations'> = ['profiles', 'consent', 'seenUsers', 'archive', 'violations', 'forwardBlocked', 'forwardViolations', 'overview', 'destinations'];

  it('row for row, cell for cell', () => {
    expect(start).toBeGreaterThan(0);
    expect(rows).toHaveLength(readerOfRow.length);
    rows.forEach(([, ...cells], r) => {
      const reader = readerOfRow[r];
      const documented = Object.fromEntries(FATE_KINDS.map((kind, k) => [kind, cells[k]]));
      const coded = Object.fromEntries(
        FATE_KINDS.map((kind) => [kind, reader === 'destinations' ? (FATE_AT_DESTINATIONS[kind] === 'decide' ? 'decided' : `stopped: \`${FATE_AT_DESTINATIONS[kind]}\``) : FATE_READERS[kind][reader] ? 'yes' : 'no']),
      );
      expect({ reader, ...documented }).toEqual({ reader, ...coded });
    });
  });
});

describe('a consent change is never swallowed by a plan', () => {
  const AT = '2026-05-04T09:30:00.000Z';
  const common: TrackingPlanRule = {
    type: 'COMMON',
    version: 1,
    jsonSchema: { $schema: 'http://json-schema.org/draft-07/schema#', labels: {}, properties: { context: { type: 'object', required: ['app'] } } },
    createdAt: AT,
    updatedAt: AT,
  };
  const plan = compilePlan({ id: 'tp_1', name: 'Shop' }, [common]);
  const strict = patchControls(DEFAULT_CONTROLS, { track: { allowUnplannedEvents: false, commonEventOnViolations: 'BLOCK' }, identify: { commonEventOnViolations: 'BLOCK' } });
  const consent = { consent: { categoryPreferences: { ads: false } } };

  it('passes Segment Consent Preference Updated that the plan does not list, its violations still reported', () => {
    const body: MessageBody = { type: 'track', messageId: 'm', userId: 'u', event: CONSENT_PREFERENCE_EVENT, properties: {}, context: consent };
    const verdict = decideCallPlan(body, plan, strict);
    expect(verdict).toMatchObject({ status: 'passed', exemptFromBlock: 'consent-change', body });
    expect(verdict.violations.map((v) => v.violationType)).toEqual(['Unplanned-Event']);
    expect(verdict.decidedBy).toBeUndefined();
    expect(fateOf(false, verdict).kind).toBe('accepted');
  });

  it('still blocks any other event, and an identify carrying consent, whose consent alone reaches the profile', () => {
    const other: MessageBody = { type: 'track', messageId: 'm', userId: 'u', event: 'Order Completed', properties: {}, context: consent };
    expect(decideCallPlan(other, plan, strict)).toMatchObject({ status: 'blocked', decidedBy: 'unplanned-event' });
    const identify: MessageBody = { type: 'identify', messageId: 'm2', userId: 'u', traits: { plan: 'pro' }, context: consent };
    const verdict = decideCallPlan(identify, plan, strict);
    expect(verdict).toMatchObject({ status: 'blocked', decidedBy: 'common-violations' });
    expect(fateOf(false, verdict).kind).toBe('blocked');
    const message = acceptCall({ type: 'identify', fields: { userId: 'u', traits: { plan: 'pro' }, context: consent } }, Date.parse(AT));
    expect(profileUpdates([message]).map((u) => u.type)).toEqual(['identify', 'consent']);
    expect(consentUpdate(message)).toMatchObject({ type: 'consent', userId: 'u', preferences: { ads: false } });
  });
});

import { randomBytes } from 'node:crypto';
import { callIds } from '../../src/delivery/erasure';
import { messageBody } from '../../src/delivery/payload';
import { deliverySummary } from '../../src/delivery/summary';
import type { DeliveryInput, MessageBody } from '../../src/delivery/types';
import { deliveryPlanner, outgoing, type DestinationRules } from '../../src/messages/plan-deliveries';
import { bodySealer, inputBodies, OPEN } from '../../src/messages/seal-bodies';
import { identifierHash } from '../../src/privacy/keyring';
import { keyCheck, openBody, openCallIds, ReplacedKeyError, sealBody, SealedBodyError } from '../../src/privacy/sealed-body';
import { DEFAULT_CONSENT } from '../../src/rules/consent';
import { compileFilter, type CompiledFilter, type FilterSettings } from '../../src/rules/destination-filters';
import type { EnabledDestination } from '../../src/store/types';
import { memoryDataKeys, testKeyring } from '../helpers/payload-keys';

/**
 * The seal is the call's, chosen before any destination's
 * rules. A filter on the first destination that drops the ids used to switch sealing off for the
 * whole message, every other destination's full body included.
 */
const keyring = testKeyring();
const USER = 'alice-seal-canary@example.com';
const ANON = 'anon-seal-canary-41c2';

const memoryKeys = memoryDataKeys;

function filter(id: string, settings: Pick<FilterSettings, 'if' | 'actions'>): CompiledFilter {
  const result = compileFilter(id, { title: id, enabled: true, ...settings });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.filter;
}

const destination = (id: string): EnabledDestination => ({ id, webhookUrls: [`https://${id}.example.com/hook`], consent: DEFAULT_CONSENT });
const policy = { retryWindowMs: 60_000, timeoutMs: 5_000, initialBackoffMs: 100, maxBackoffMs: 1_000 } as DeliveryInput['policy'];

function planner(filters: Record<string, CompiledFilter[]>, keys = memoryKeys()) {
  const enabled = Object.keys(filters).map(destination);
  const rules = new Map(Object.entries(filters).map(([id, list]): [string, DestinationRules] => [id, { consent: DEFAULT_CONSENT, filters: list }]));
  return deliveryPlanner({ listEnabled: async () => enabled }, policy, bodySealer(keys, keyring), { rulesOf: async () => rules });
}

const track = (fields: { userId?: string; anonymousId?: string }) =>
  outgoing(
    { type: 'track', messageId: `m-${randomBytes(4).toString('hex')}`, ...fields, timestamp: '2026-01-01T00:00:00.000Z', receivedAt: '2026-01-01T00:00:01.000Z', context: { traits: { email: USER } }, event: 'Order Completed', properties: { total: 3 } },
    { suppressed: false },
  );

const dropIds = filter('df_ids', { if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { '': ['userId', 'anonymousId'] } }] });
const dropUser = filter('df_user', { if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { '': ['userId'] } }] });
const onlyEvent = filter('df_allow', { if: 'all', actions: [{ type: 'ALLOW_PROPERTIES', fields: { '': ['event', 'type', 'messageId'] } }] });

describe("a call's bodies enter Temporal sealed under the call's seal, whatever a destination's filters do", () => {
  it.each<[string, CompiledFilter[], { userId?: string; anonymousId?: string }]>([
    ['the first destination drops userId and anonymousId', [dropIds], { userId: USER, anonymousId: ANON }],
    ['the first destination drops the userId of a call with only a userId', [dropUser], { userId: USER }],
    ['the first destination drops the anonymousId of an anonymous call', [dropIds], { anonymousId: ANON }],
    ['the first destination keeps only the event name', [onlyEvent], { userId: USER, anonymousId: ANON }],
  ])('leaves no body unsealed when %s', async (_, firstFilters, ids) => {
    const plan = await planner({ dst_A: firstFilters, dst_B: [] })('src', [track(ids)]);
    if (plan.status !== 'planned') throw new Error(plan.status);
    const [input] = plan.inputs;
    expect(input.destinationIds).toEqual(['dst_A', 'dst_B']);
    expect(input.message).toBeUndefined();
    expect(input.userId).toBeUndefined();
    expect(input.sealedMessage?.subject).toBe(ids.userId ? identifierHash(keyring, 'userId', ids.userId) : identifierHash(keyring, 'anonymousId', ids.anonymousId!));
    for (const own of Object.values(input.destinationBodies ?? {})) expect(own).toEqual({ sealedMessage: expect.objectContaining({ sealed: 1, subject: input.sealedMessage!.subject }) });
    const text = JSON.stringify(input) + deliverySummary(input);
    for (const id of [USER, ANON]) expect(text).not.toContain(id);
    expect(deliverySummary(input)).toContain('sealed');
  });

  it('seals the call ids beside every body, so a body stripped of them is still known by its user', async () => {
    const keys = memoryKeys();
    const call = track({ userId: USER, anonymousId: ANON });
    const plan = await planner({ dst_A: [dropIds], dst_B: [] }, keys)('src', [call]);
    if (plan.status !== 'planned') throw new Error(plan.status);
    const [input] = plan.inputs;
    const key = keys.table.get(input.sealedMessage!.subject)!;
    const opened = openBody(key, input.messageId, input.sealedMessage!);
    expect(opened.userId).toBeUndefined();
    for (const sealed of [input.sealedMessage!, ...Object.values(input.destinationBodies ?? {}).map((own) => own.sealedMessage!)]) {
      expect(openCallIds(key, input.messageId, sealed)).toEqual(callIds('track', call.body!));
    }
    expect(openCallIds(key, input.messageId, input.sealedMessage!)).toMatchObject({ userId: USER, anonymousId: ANON, receivedAt: '2026-01-01T00:00:01.000Z' });
  });

  it('leaves bodies in the clear only under an open seal (no keys, a delete notification, a call with no id)', () => {
    const body: MessageBody = { type: 'delete', userId: USER, timestamp: '2026-01-01T00:00:00.000Z' };
    expect(inputBodies('m1', OPEN, { userId: USER, body })).toEqual({ userId: USER, message: body });
  });

  it('chooses no subject for a delete notification: it must still reach receivers after the key is gone', async () => {
    const [seal] = await bodySealer(memoryKeys(), keyring)([{ type: 'delete', body: { type: 'delete', userId: USER } }]);
    expect(seal).toEqual(OPEN);
  });

  it('seals a mapping destination\'s body like any other: mappings render from the sealed body at send time', async () => {
    const keys = memoryKeys();
    const enabled: EnabledDestination[] = [{ ...destination('dst_A') }, { ...destination('dst_M'), mappings: [{ name: 'orders', trigger: 'type = "track"' }] }];
    const rules = new Map<string, DestinationRules>([
      ['dst_A', { consent: DEFAULT_CONSENT, filters: [dropIds] }],
      ['dst_M', { consent: DEFAULT_CONSENT, filters: [dropUser] }],
    ]);
    const plan = await deliveryPlanner({ listEnabled: async () => enabled }, policy, bodySealer(keys, keyring), { rulesOf: async () => rules })('src', [track({ userId: USER })]);
    if (plan.status !== 'planned') throw new Error(plan.status);
    expect(plan.inputs[0].mappings).toEqual({ dst_M: ['orders'] });
    expect(JSON.stringify(plan.inputs[0])).not.toContain(USER);
  });
});

describe('a sealed body names the key it was sealed under', () => {
  const body = messageBody({ type: 'track', messageId: 'm1', userId: 'u1', timestamp: 't', receivedAt: 't', context: {}, event: 'E' });

  it('tells a key replaced since (the user erased, then back) from an altered body', () => {
    const first = randomBytes(32);
    const sealed = sealBody(first, 'h1_s', 'm1', body);
    expect(sealed.keyCheck).toBe(keyCheck(first));
    expect(() => openBody(randomBytes(32), 'm1', sealed)).toThrow(ReplacedKeyError);
    const altered = { ...sealed, data: Buffer.from(sealed.data, 'base64').fill(1, 0, 1).toString('base64') };
    let thrown: unknown;
    try {
      openBody(first, 'm1', altered);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(SealedBodyError);
    expect(thrown).not.toBeInstanceOf(ReplacedKeyError);
  });

  it('still opens a body sealed before key checks', () => {
    const key = randomBytes(32);
    const { keyCheck: _none, ...old } = sealBody(key, 'h1_s', 'm1', body);
    expect(openBody(key, 'm1', old)).toEqual(body);
    expect(openCallIds(key, 'm1', old)).toBeUndefined();
  });
});

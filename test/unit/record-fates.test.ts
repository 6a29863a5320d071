import type { DeliveryInput } from '../../src/delivery/types';
import type { Message } from '../../src/delivery/payload';
import { fateOf } from '../../src/messages/call-fate';
import { deliveryPlanner, outgoing, type DestinationDecision, type DestinationRules } from '../../src/messages/plan-deliveries';
import { fateRecorder } from '../../src/messages/record-fates';
import { bodySealer } from '../../src/messages/seal-bodies';
import { identifierHash } from '../../src/privacy/keyring';
import { CALL_FATE, isSealedBody, openBody } from '../../src/privacy/sealed-body';
import { DEFAULT_CONSENT } from '../../src/rules/consent';
import type { MessageFate } from '../../src/store/types';
import { memoryDataKeys, testKeyring } from '../helpers/payload-keys';

/**
 * "What happened to one event" is recorded from the one decision per (message, destination) the
 * planner makes: every enabled destination gets a row, sent or stopped with the decision's reason,
 * and a row keeps nothing of its user in the clear (nothing at all of a suppressed user).
 */
const keyring = testKeyring();
const policy = { retryWindowMs: 60_000, timeoutMs: 5_000, initialBackoffMs: 100, maxBackoffMs: 1_000 } as DeliveryInput['policy'];
const USER = 'fate-user-canary@example.com';


const message = (messageId: string, extra: Partial<Message> = {}): Message =>
  ({ type: 'track', messageId, userId: USER, event: 'Checkout Started', timestamp: '2026-01-01T00:00:00.000Z', receivedAt: '2026-01-01T00:00:01.000Z', context: {}, properties: {}, ...extra });

async function decisionsOf(messages: Array<{ message: Message; suppressed?: boolean; planBlocked?: true; integrations?: Record<string, unknown> }>) {
  const enabled = ['dst_a', 'dst_ads'].map((id) => ({ id, webhookUrls: [`https://${id}.example.com/hook`], consent: DEFAULT_CONSENT }));
  const rules = new Map<string, DestinationRules>([
    ['dst_a', { consent: DEFAULT_CONSENT, filters: [] }],
    ['dst_ads', { consent: { categories: ['advertising'], whenAbsent: 'deliver' }, filters: [] }],
  ]);
  const keys = memoryDataKeys();
  const plan = await deliveryPlanner({ listEnabled: async () => enabled }, policy, bodySealer(keys, keyring), { rulesOf: async () => rules })(
    'src_x',
    messages.map((m) => outgoing(m.message, { integrations: m.integrations, suppressed: m.suppressed ?? false, ...(m.planBlocked && { planBlocked: true }) })),
    keys,
  );
  if (plan.status !== 'planned') throw new Error('no destinations');
  return { decisions: plan.decisions, keys };
}

const refused = { consent: { categoryPreferences: { advertising: false } } };

describe('the planner says what it decided for every (message, destination)', () => {
  it.each<[string, Parameters<typeof decisionsOf>[0][number], Array<Omit<DestinationDecision, 'messageId'>>]>([
    ['sent to both', { message: message('m') }, [{ destinationId: 'dst_a', decision: 'sent' }, { destinationId: 'dst_ads', decision: 'sent' }]],
    ['consent refused for one', { message: message('m', { context: refused }) }, [{ destinationId: 'dst_a', decision: 'sent' }, { destinationId: 'dst_ads', decision: 'consent' }]],
    ['blocked by the plan for both', { message: message('m'), planBlocked: true }, [{ destinationId: 'dst_a', decision: 'plan' }, { destinationId: 'dst_ads', decision: 'plan' }]],
    ['suppressed for both', { message: message('m'), suppressed: true }, [{ destinationId: 'dst_a', decision: 'suppressed' }, { destinationId: 'dst_ads', decision: 'suppressed' }]],
    ['integrations off for both', { message: message('m'), integrations: { All: false } }, [{ destinationId: 'dst_a', decision: 'integrations' }, { destinationId: 'dst_ads', decision: 'integrations' }]],
  ])('%s', async (_, input, expected) => {
    const { decisions } = await decisionsOf([input]);
    expect(decisions).toEqual(expected.map((d) => ({ messageId: 'm', ...d })));
  });
});

describe('a fate row names nobody in the clear', () => {
  async function rowsOf(suppressed: boolean): Promise<{ rows: MessageFate[]; keys: ReturnType<typeof memoryDataKeys> }> {
    const m = message(suppressed ? 'm-quiet' : 'm-kept');
    const { decisions, keys } = await decisionsOf([{ message: m, suppressed }]);
    const rows: MessageFate[] = [];
    await fateRecorder({ fates: { add: async (fates) => void rows.push(...fates) } }, keyring)('src_x', [{ message: m, fate: fateOf(suppressed, undefined) }], decisions, keys);
    return { rows, keys };
  }

  it('keeps the ids and the event as keyed hashes and sealed under the user\'s data key, opened only with it', async () => {
    const { rows, keys } = await rowsOf(false);
    expect(rows).toHaveLength(2);
    expect(JSON.stringify(rows)).not.toContain(USER);
    expect(JSON.stringify(rows)).not.toContain('Checkout Started');
    for (const row of rows) {
      expect(row).toMatchObject({ userHash: identifierHash(keyring, 'userId', USER), eventHash: identifierHash(keyring, 'eventName', 'Checkout Started') });
      if (!isSealedBody(row.summary)) throw new Error('summary not sealed');
      expect(openBody(keys.table.get(identifierHash(keyring, 'userId', USER))!, row.messageId, row.summary, CALL_FATE)).toMatchObject({ userId: USER, event: 'Checkout Started' });
    }
  });

  it('keeps nothing of a suppressed user: only that the call was stopped, and why', async () => {
    const { rows } = await rowsOf(true);
    expect(rows.map(({ destinationId, decision, userHash, anonymousHash, eventHash, summary }) => ({ destinationId, decision, userHash, anonymousHash, eventHash, summary }))).toEqual([
      { destinationId: 'dst_a', decision: 'suppressed', userHash: undefined, anonymousHash: undefined, eventHash: undefined, summary: undefined },
      { destinationId: 'dst_ads', decision: 'suppressed', userHash: undefined, anonymousHash: undefined, eventHash: undefined, summary: undefined },
    ]);
  });
});

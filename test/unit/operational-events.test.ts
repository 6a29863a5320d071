import { FAILING_AFTER_ATTEMPTS, errorText, incidentId, windowStart, laneTransition, operationalBody, slackText, statusOfReason, subscribes, withNames, type LaneIncident, type OperationalEvent } from '../../src/delivery/operational-events';

/** When a delivery lane raises an operational event, and which incident it belongs to. */

const fresh: LaneIncident = { failedAttempts: 0, failingSent: false };

/** Runs a lane's answers through laneTransition; returns the events raised, in order. */
function raised(answers: ('failed' | 'succeeded' | 'exhausted')[]): string[] {
  let state = fresh;
  const events: string[] = [];
  for (const answer of answers) {
    const { after, raise } = laneTransition(state, answer);
    state = after;
    if (raise) events.push(raise);
  }
  return events;
}

const fail = (n: number) => Array<'failed'>(n).fill('failed');

describe('laneTransition', () => {
  it.each([
    ['a first success', ['succeeded'], []],
    ['three failures then a success', [...fail(3), 'succeeded'], []],
    ['three failures then giving up', [...fail(3), 'exhausted'], ['message.attempt.exhausted']],
    ['the 4th failure', fail(4), ['message.attempt.failing']],
    ['50 failures: failing once, never again', fail(50), ['message.attempt.failing']],
    ['failing, then a success', [...fail(4), 'succeeded'], ['message.attempt.failing', 'message.attempt.recovered']],
    ['failing, then giving up', [...fail(7), 'exhausted'], ['message.attempt.failing', 'message.attempt.exhausted']],
    ['a success after failing is recovered once', [...fail(4), 'succeeded', 'succeeded'], ['message.attempt.failing', 'message.attempt.recovered']],
  ] as const)('%s → %j', (_name, answers, events) => {
    expect(raised([...answers])).toEqual(events);
  });

  it('fires failing at Svix’s 4th failed attempt', () => {
    expect(FAILING_AFTER_ATTEMPTS).toBe(4);
  });
});

const event = (type: OperationalEvent['type'], data: Partial<OperationalEvent['data']> = {}): OperationalEvent => ({ type, timestamp: '2026-11-28T00:00:00.000Z', data: { sourceId: 'src_1', destinationId: 'dst_1', ...data } });

describe('incidentId', () => {
  it('is the same for the same incident, raised by any worker or retry', () => {
    const a = incidentId(event('endpoint.disabled', { webhookIndex: 0, lastAttempt: { responseStatusCode: 410, timestamp: 'x' } }), { since: '2026-11-28T01:00:00.000Z' });
    const b = incidentId(event('endpoint.disabled', { webhookIndex: 0, lastAttempt: { responseStatusCode: 410, timestamp: 'y' } }), { since: '2026-11-28T01:00:00.000Z' });
    expect(a).toBe(b);
  });
  it.each([
    ['another switch-off of the same URL', event('endpoint.disabled', { webhookIndex: 0 }), { since: 'later' }],
    ['another URL of the destination', event('endpoint.disabled', { webhookIndex: 1 }), { since: 'then' }],
    ['the switch back on', event('endpoint.enabled', { webhookIndex: 0 }), { since: 'then' }],
  ])('differs for %s', (_name, other, scope) => {
    expect(incidentId(other, scope)).not.toBe(incidentId(event('endpoint.disabled', { webhookIndex: 0 }), { since: 'then' }));
  });
  it('without a window (OPERATIONAL_EVENT_WINDOW=0), names a message event by its delivery run, so a redelivery is a new incident and a retried raise is not', () => {
    const exhausted = event('message.attempt.exhausted', { messageId: 'm-1', webhookIndex: 0 });
    expect(incidentId(exhausted, { run: 'run-1' })).toBe(incidentId(exhausted, { run: 'run-1' }));
    expect(incidentId(exhausted, { run: 'run-2' })).not.toBe(incidentId(exhausted, { run: 'run-1' }));
    expect(incidentId(event('message.attempt.failing', { messageId: 'm-1', webhookIndex: 0 }), { run: 'run-1' })).not.toBe(incidentId(exhausted, { run: 'run-1' }));
  });
  it('names a background task by its kind and id', () => {
    const finished = (id: string): OperationalEvent => ({ type: 'background_task.finished', timestamp: 't', data: { sourceId: 'src_1', task: { kind: 'redelivery', id, status: 'completed' } } });
    expect(incidentId(finished('rdl_1'), {})).toBe(incidentId(finished('rdl_1'), {}));
    expect(incidentId(finished('rdl_2'), {})).not.toBe(incidentId(finished('rdl_1'), {}));
    expect(slackText(finished('rdl_1'))).toBe('Switchyard: source src_1 finished a background task (background_task.finished); redelivery rdl_1 completed');
  });
  it('keeps each mapping of an actions destination apart', () => {
    expect(incidentId(event('message.attempt.exhausted', { mapping: 'a' }), { run: 'r' })).not.toBe(incidentId(event('message.attempt.exhausted', { mapping: 'b' }), { run: 'r' }));
  });
});

const MINUTE = 60_000;
const WINDOW = 5 * MINUTE;
/** A message event of a lane, raised at `at` (ms after the start of a window) by message `n`'s delivery run. */
const raisedBy = (type: OperationalEvent['type'], n: number, at: number, data: Partial<OperationalEvent['data']> = {}) => ({
  event: { type, timestamp: new Date(Date.parse('2026-11-28T10:00:00.000Z') + at).toISOString(), data: { sourceId: 'src_1', destinationId: 'dst_1', messageId: `m-${n}`, webhookIndex: 0, ...data } } as OperationalEvent,
  scope: { run: `run-${n}`, windowMs: WINDOW },
});
const MESSAGE_EVENTS = ['message.attempt.failing', 'message.attempt.exhausted', 'message.attempt.recovered'] as const;

describe('incidentId per lane and window', () => {
  it.each(MESSAGE_EVENTS)('1,000 messages of one destination failing within one window make one %s incident', (type) => {
    const ids = new Set(Array.from({ length: 1_000 }, (_, n) => raisedBy(type, n, (n * WINDOW) / 1_000)).map(({ event, scope }) => incidentId(event, scope)));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toBe(`operational:${type}:dst_1:webhook:0:window:2026-11-28T10:00:00.000Z`);
  });

  it('1,000 messages failing at one destination start 3 operational workflows at most, not 2,000', () => {
    const ids = new Set(MESSAGE_EVENTS.flatMap((type) => Array.from({ length: 1_000 }, (_, n) => raisedBy(type, n, n * 100)).map(({ event, scope }) => incidentId(event, scope))));
    expect(ids.size).toBe(3);
  });

  const first = raisedBy('message.attempt.failing', 1, 0);
  it.each([
    ['the next window', raisedBy('message.attempt.failing', 2, WINDOW)],
    ['the window before', raisedBy('message.attempt.failing', 2, -1)],
    ['another destination', raisedBy('message.attempt.failing', 2, 10, { destinationId: 'dst_2' })],
    ['another webhook URL of the destination', raisedBy('message.attempt.failing', 2, 10, { webhookIndex: 1 })],
    ['a mapping of the destination', raisedBy('message.attempt.failing', 2, 10, { webhookIndex: undefined, mapping: 'Order to CRM' })],
    ['another type', raisedBy('message.attempt.exhausted', 2, 10)],
  ])('is another incident for %s', (_name, other) => {
    expect(incidentId(other.event, other.scope)).not.toBe(incidentId(first.event, first.scope));
  });

  it('is the same incident for the same message raised again, or for a message of another source at the lane', () => {
    expect(incidentId(first.event, first.scope)).toBe(incidentId(first.event, { ...first.scope, run: 'another run' }));
    const other = raisedBy('message.attempt.failing', 2, WINDOW - 1, { sourceId: 'src_2', messageId: 'm-x' });
    expect(incidentId(other.event, other.scope)).toBe(incidentId(first.event, first.scope));
  });

  it('leaves the incident of a switch-off, a switch back on and a background task as it was', () => {
    const disabled = event('endpoint.disabled', { webhookIndex: 0 });
    const enabled = event('endpoint.enabled', { webhookIndex: 0 });
    const finished: OperationalEvent = { type: 'background_task.finished', timestamp: '2026-11-28T10:00:00.000Z', data: { sourceId: 'src_1', task: { kind: 'replay', id: 'rpl_1', status: 'completed' } } };
    expect(incidentId(disabled, { since: 'then', windowMs: WINDOW })).toBe('operational:endpoint.disabled:dst_1:webhook:0:then');
    expect(incidentId(enabled, { since: 'then', windowMs: WINDOW })).toBe(incidentId(enabled, { since: 'then' }));
    expect(incidentId(finished, { windowMs: WINDOW })).toBe('operational:background_task.finished:replay:rpl_1');
  });

  it.each([
    ['2026-11-28T10:04:59.999Z', WINDOW, '2026-11-28T10:00:00.000Z'],
    ['2026-11-28T10:05:00.000Z', WINDOW, '2026-11-28T10:05:00.000Z'],
    ['2026-11-28T10:00:01.500Z', 1_000, '2026-11-28T10:00:01.000Z'],
    ['2026-11-28T10:00:00.000Z', 0, undefined],
    ['not a time', WINDOW, undefined],
  ])('the window of %s, %d ms long, starts at %s', (timestamp, windowMs, start) => {
    expect(windowStart(timestamp, windowMs)).toBe(start);
  });

  it('falls back to the delivery run when the timestamp cannot be read', () => {
    const unreadable = { ...first.event, timestamp: 'not a time' };
    expect(incidentId(unreadable, first.scope)).toBe(incidentId(unreadable, { run: 'run-1' }));
  });
});

describe('what an event carries', () => {
  it.each([
    ['HTTP 503', 503],
    ['HTTP 410 Gone', 410],
    ['connect ECONNREFUSED 127.0.0.1:9', 0],
    ['timed out after 10000 ms', 0],
  ])('reads the status of %s as %d', (reason, status) => {
    expect(statusOfReason(reason)).toBe(status);
  });
  it('cuts a long error to 300 characters', () => {
    expect(errorText('x'.repeat(5_000))).toHaveLength(300);
    expect(errorText('HTTP 500')).toBe('HTTP 500');
  });
  it.each([
    [[], 'endpoint.disabled', true],
    [['endpoint.disabled'], 'endpoint.disabled', true],
    [['message.attempt.exhausted'], 'endpoint.disabled', false],
  ] as const)('subscriptions %j receive %s: %s', (types, type, yes) => {
    expect(subscribes(types, type)).toBe(yes);
  });
  it('sends the envelope as it is in the standard format, and one line of text to Slack', () => {
    const e = event('message.attempt.exhausted', { messageId: 'm-1', webhookIndex: 0, lastAttempt: { responseStatusCode: 500, error: 'HTTP 500', timestamp: 't' } });
    expect(JSON.parse(operationalBody(e, 'standard'))).toEqual(e);
    expect(JSON.parse(operationalBody(e, 'slack'))).toEqual({ text: slackText(e) });
    expect(slackText(e)).toBe('Switchyard: destination dst_1 webhook 0 gave up on a message (message.attempt.exhausted); message m-1; last attempt: 500 HTTP 500');
  });
});

describe('names beside ids', () => {
  it('adds the source, destination and mapping names, and leaves the incident as it was', () => {
    const e = event('message.attempt.exhausted', { messageId: 'm-1', mapping: 'Order to CRM' });
    const named = withNames(e, { sourceName: 'Web shop', destinationName: 'CRM' });
    expect(named.data).toMatchObject({ sourceId: 'src_1', sourceName: 'Web shop', destinationId: 'dst_1', destinationName: 'CRM', mapping: 'Order to CRM', mappingName: 'Order to CRM' });
    expect(incidentId(named, { run: 'r' })).toBe(incidentId(e, { run: 'r' }));
    expect(slackText(named)).toBe('Switchyard: destination CRM (dst_1) mapping Order to CRM gave up on a message (message.attempt.exhausted); message m-1');
  });
  it('adds no name it does not have (a deleted destination, a webhook lane)', () => {
    const named = withNames(event('endpoint.disabled', { webhookIndex: 0 }), { sourceName: 'Web shop' });
    expect(named.data).not.toHaveProperty('destinationName');
    expect(named.data).not.toHaveProperty('mappingName');
    expect(slackText(named)).toMatch(/^Switchyard: destination dst_1 webhook 0 /);
  });
});

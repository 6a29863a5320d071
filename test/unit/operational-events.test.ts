import { FAILING_AFTER_ATTEMPTS, errorText, incidentId, laneTransition, operationalBody, slackText, statusOfReason, subscribes, withNames, type LaneIncident, type OperationalEvent } from '../../src/delivery/operational-events';

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
  it('names a message event by its delivery run, so a redelivery is a new incident and a retried raise is not', () => {
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

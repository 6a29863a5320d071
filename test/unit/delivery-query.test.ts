import { deliverySummary } from '../../src/delivery/summary';
import type { DeliveryStatusName } from '../../src/ports';
import { identifierHash, parseKeyring } from '../../src/privacy/keyring';
import { decodeCursor, deliveryQuery, deliveryStatus, encodeCursor, messageIdOf, statusClause, UnsafeFilterError, userDeliveryQueries, visibilityLiteral } from '../../src/temporal/delivery-query';

const SRC = 'src_0123456789abcdef0123456789abcdef';
const DST = 'dst_0123456789abcdef0123456789abcdef';
const BASE = 'WorkflowType = "deliverMessage"';
const DELIVERED = '(SwitchyardStatus = "delivered" OR (ExecutionStatus = "Completed" AND SwitchyardStatus IN ("delivering", "retrying")))';

describe('deliveries as a Temporal visibility query', () => {
  it.each([
    ['no filter: every delivery workflow', {}, BASE],
    ['by source', { sourceId: SRC }, `${BASE} AND SwitchyardSource = "${SRC}"`],
    ['by destination (a keyword list contains it)', { destinationId: DST }, `${BASE} AND SwitchyardDestinations = "${DST}"`],
    ['by type', { type: 'track' as const }, `${BASE} AND SwitchyardType = "track"`],
    ['by userId without keys (PAYLOAD_ENCRYPTION=off), an apostrophe kept as it is', { userId: "o'brien" }, `${BASE} AND SwitchyardUserId = "o'brien"`],
    ['since and until as UTC start times', { since: '2026-01-01T01:00:00+01:00', until: '2026-01-02T00:00:00Z' }, `${BASE} AND StartTime >= "2026-01-01T00:00:00.000Z" AND StartTime < "2026-01-02T00:00:00.000Z"`],
    ['delivering: still running', { status: 'delivering' as const }, `${BASE} AND (SwitchyardStatus = "delivering" AND ExecutionStatus = "Running")`],
    ['retrying: still running', { status: 'retrying' as const }, `${BASE} AND (SwitchyardStatus = "retrying" AND ExecutionStatus = "Running")`],
    ['delivered includes completed runs left delivering or retrying (no last upsert)', { status: 'delivered' as const }, `${BASE} AND ${DELIVERED}`],
    ['failed includes runs past their execution timeout', { status: 'failed' as const }, `${BASE} AND (SwitchyardStatus = "failed" OR ExecutionStatus = "TimedOut")`],
    ['stopped includes terminated runs', { status: 'stopped' as const }, `${BASE} AND (SwitchyardStatus = "stopped" OR ExecutionStatus IN ("Terminated", "Canceled"))`],
    ['filters combine with AND', { sourceId: SRC, type: 'page' as const, status: 'delivered' as const }, `${BASE} AND SwitchyardSource = "${SRC}" AND ${DELIVERED} AND SwitchyardType = "page"`],
  ])('%s', (_name, filter, expected) => {
    expect(deliveryQuery(filter, undefined)).toBe(expected);
  });

  it.each([
    ['a userId that would end the literal', { userId: 'x" OR WorkflowType = "deliverMessage' }],
    ['a userId with a backslash', { userId: 'a\\' }],
    ['a userId with a line break', { userId: 'a\nb' }],
    ['a sourceId not of the store\'s shape', { sourceId: `${SRC}" OR "1" = "1` }],
    ['a destinationId not of the store\'s shape', { destinationId: 'dst_1' }],
    ['a type that is not a message type', { type: 'click" OR "1' as never }],
    ['a status that is not a delivery status', { status: 'lost' as never }],
    ['a since that is not a date', { since: 'yesterday' }],
  ])('refuses %s (without keys)', (_name, filter) => {
    expect(() => deliveryQuery(filter, undefined)).toThrow(UnsafeFilterError);
  });

  it('quotes a plain value and refuses quote, backslash and control characters', () => {
    expect(visibilityLiteral('u-1')).toBe('"u-1"');
    for (const bad of ['"', '\\', '\u0000', '\u007f']) expect(() => visibilityLiteral(`a${bad}b`)).toThrow(UnsafeFilterError);
  });
});

describe('delivery status from the search attribute and the execution status', () => {
  it.each([
    ['delivering', 'RUNNING', 'delivering'],
    ['retrying', 'RUNNING', 'retrying'],
    ['delivered', 'RUNNING', 'delivered'],
    ['delivered', 'COMPLETED', 'delivered'],
    // A delivery that succeeded writes no last status (policy.deliveredImplied).
    ['delivering', 'COMPLETED', 'delivered'],
    ['retrying', 'COMPLETED', 'delivered'],
    [undefined, 'COMPLETED', 'delivered'],
    ['stopped', 'COMPLETED', 'stopped'],
    ['failed', 'FAILED', 'failed'],
    ['retrying', 'TERMINATED', 'stopped'],
    ['delivering', 'CANCELED', 'stopped'],
    ['delivering', 'TIMED_OUT', 'failed'],
    ['retrying', 'TIMED_OUT', 'failed'],
    [undefined, 'RUNNING', 'delivering'],
  ] as const)('%s while %s → %s', (attribute, execution, expected) => {
    expect(deliveryStatus(attribute, execution)).toBe(expected);
  });
});

describe('a status as a visibility clause, the same rule as deliveryStatus', () => {
  it.each([
    ['delivering', '(SwitchyardStatus = "delivering" AND ExecutionStatus = "Running")'],
    ['retrying', '(SwitchyardStatus = "retrying" AND ExecutionStatus = "Running")'],
    ['delivered', DELIVERED],
    ['failed', '(SwitchyardStatus = "failed" OR ExecutionStatus = "TimedOut")'],
    ['stopped', '(SwitchyardStatus = "stopped" OR ExecutionStatus IN ("Terminated", "Canceled"))'],
  ] as const)('%s → %s', (status, clause) => {
    expect(statusClause(status)).toBe(clause);
  });

  // Every (attribute, execution) pair a delivery run can be in: the clause matches a run exactly
  // when deliveryStatus gives that status. ExecutionStatus as the clause names it, and as the client
  // reads it. A last status is written in the workflow task that closes the run (visibility may show
  // it on the running run a moment first), so only an under-way status meets Temporal's own ends.
  const CLIENT_NAME = { Running: 'RUNNING', Completed: 'COMPLETED', Failed: 'FAILED', Terminated: 'TERMINATED', Canceled: 'CANCELED', TimedOut: 'TIMED_OUT' } as const;
  const REACHABLE: [DeliveryStatusName, (keyof typeof CLIENT_NAME)[]][] = [
    ['delivering', ['Running', 'Completed', 'Terminated', 'Canceled', 'TimedOut']],
    ['retrying', ['Running', 'Completed', 'Terminated', 'Canceled', 'TimedOut']],
    ['delivered', ['Running', 'Completed']],
    ['stopped', ['Running', 'Completed']],
    ['failed', ['Running', 'Failed']],
  ];
  const ATTRIBUTES = REACHABLE.map(([attribute]) => attribute);
  /** Evaluates a clause of this module's shapes (=, IN, AND, OR, parentheses) against one run. */
  function matches(clause: string, run: Record<string, string>): boolean {
    const js = clause
      .replace(/(\w+) IN \(([^)]*)\)/g, (_m, field: string, list: string) => `[${list}].includes(run.${field})`)
      .replace(/(\w+) = ("[^"]*")/g, (_m, field: string, value: string) => `run.${field} === ${value}`)
      .replace(/ AND /g, ' && ')
      .replace(/ OR /g, ' || ');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the test runs the query it translated, as visibility would
    return (new Function('run', `return ${js};`) as (run: Record<string, string>) => boolean)(run);
  }
  it.each(REACHABLE.flatMap(([attribute, executions]) => executions.map((execution) => [attribute, execution] as const)))('%s while %s: matched by the clause of its status only', (attribute, execution) => {
    const run = { SwitchyardStatus: attribute, ExecutionStatus: execution };
    const shown = deliveryStatus(attribute, CLIENT_NAME[execution]);
    for (const status of ATTRIBUTES) expect([status, matches(statusClause(status), run)]).toEqual([status, status === shown]);
  });
});

describe('user ids in visibility queries, with keys', () => {
  const keyring = parseKeyring(`k1=${Buffer.alloc(32, 7).toString('base64')}`);
  const userHash = (id: string) => identifierHash(keyring, 'userId', id);
  const anonymousHash = (id: string) => identifierHash(keyring, 'anonymousId', id);

  it.each([
    ['a plain id', 'u1'],
    ['a double quote that would end the literal', 'x" OR WorkflowType = "deliverMessage'],
    ['a backslash', 'a\\b'],
    ['a line break', 'a\nb'],
    ['non-ASCII characters', 'zoë@exämple.com 🦊'],
  ])('the userId filter matches the keyed hash of %s, never the id', (_name, userId) => {
    const query = deliveryQuery({ userId }, keyring);
    expect(query).toBe(`${BASE} AND SwitchyardUserId = "${userHash(userId)}"`);
    expect(query).not.toContain(userId);
  });

  it('finds a regulation\'s ids by both hashes, and by the plaintext of those that can be quoted (deliveries started before keys)', () => {
    const [query, ...more] = userDeliveryQueries(['u1', 'a"b'], keyring);
    expect(more).toEqual([]);
    expect(query).toBe(
      `(SwitchyardUserId IN ("${userHash('u1')}", "${userHash('a"b')}", "u1") OR SwitchyardAnonymousId IN ("${anonymousHash('u1')}", "${anonymousHash('a"b')}", "u1")) AND SwitchyardType != "delete"`,
    );
  });

  it('without keys leaves out an id it cannot quote, rather than escaping it into a clause of its own', () => {
    expect(userDeliveryQueries(['u1', 'x" OR "1" = "1', 'a\\'], undefined)).toEqual(['(SwitchyardUserId IN ("u1") OR SwitchyardAnonymousId IN ("u1")) AND SwitchyardType != "delete"']);
    expect(userDeliveryQueries(['x"'], undefined)).toEqual([]);
  });

  it('splits many ids over several queries', () => {
    const ids = Array.from({ length: 120 }, (_, i) => `user-${i}`);
    const queries = userDeliveryQueries(ids, keyring);
    expect(queries).toHaveLength(3);
    for (const id of ids) expect(queries.filter((q) => q.includes(`"${userHash(id)}"`))).toHaveLength(1);
  });
});

describe('cursor', () => {
  const query = deliveryQuery({ sourceId: SRC }, undefined);
  it('carries the page token for the same query', () => {
    const token = Uint8Array.from([1, 2, 250]);
    const cursor = encodeCursor(query, token);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect([...decodeCursor(cursor, query)!]).toEqual([1, 2, 250]);
  });
  it.each([
    ['made for other filters', encodeCursor(BASE, Uint8Array.from([1]))],
    ['not JSON', Buffer.from('not-a-token').toString('base64url')],
    ['JSON without a token', Buffer.from(JSON.stringify({ query })).toString('base64url')],
    ['not base64url of anything', '!!!'],
  ])('refuses one %s', (_name, cursor) => {
    expect(decodeCursor(cursor, query)).toBeUndefined();
  });
});

it('reads the messageId out of the workflow id, colons included', () => {
  expect(messageIdOf(`message:${SRC}:m:1`, SRC)).toBe('m:1');
});

it("reads a replayed delivery's messageId out of its replay workflow id", () => {
  expect(messageIdOf(`replay:rpl_${'0'.repeat(32)}:m:1`, SRC)).toBe('m:1');
  expect(messageIdOf('replay:elsewhere:m:1', SRC)).toBe('replay:elsewhere:m:1');
});

it('a replayed delivery names its replay first in its summary', () => {
  const input = { type: 'track' as const, userId: 'u1', destinationIds: ['dst_a'], message: { type: 'track' as const, event: 'Paid' } };
  expect(deliverySummary({ ...input, replay: { id: 'rpl_1' } })).toBe('replay rpl_1 · track · Paid · user u1 → 1 destination');
});

it('a redelivery says so first in its summary', () => {
  const input = { type: 'track' as const, userId: 'u1', destinationIds: ['dst_a'], message: { type: 'track' as const, event: 'Paid' } };
  expect(deliverySummary({ ...input, redelivery: { requestedAt: '2026-01-01T00:00:00.000Z', previousRunId: 'r1' } })).toBe('redelivery · track · Paid · user u1 → 1 destination');
  expect(deliverySummary(input)).toBe('track · Paid · user u1 → 1 destination');
});

import { decodeListingCursor, encodeListingCursor, listingPhases, nextPosition, phaseQuery } from '../../src/temporal/delivery-listing';

const AT = '2026-11-24T01:00:00.000Z';
const QUERY = 'WorkflowType = "deliverMessage"';

describe('listing phases', () => {
  it.each([
    [undefined, ['running', 'closed-since', 'closed-before']],
    ['delivering', ['running']],
    ['retrying', ['running']],
    // A run writes its last status just before it closes, so these are read in every set.
    ['delivered', ['running', 'closed-since', 'closed-before']],
    ['failed', ['running', 'closed-since', 'closed-before']],
    ['stopped', ['running', 'closed-since', 'closed-before']],
  ] as const)('status %s reads %j', (status, phases) => {
    expect(listingPhases(status)).toEqual(phases);
  });

  it.each([
    ['running', `${QUERY} AND ExecutionStatus = "Running" AND StartTime <= "${AT}"`],
    ['closed-since', `${QUERY} AND ExecutionStatus != "Running" AND StartTime <= "${AT}" AND CloseTime > "${AT}"`],
    ['closed-before', `${QUERY} AND ExecutionStatus != "Running" AND CloseTime <= "${AT}"`],
  ] as const)('%s narrows the query to its set', (phase, query) => {
    expect(phaseQuery(QUERY, phase, AT)).toBe(query);
  });

  it('the closed sets split closed runs at the moment, so none falls between them', () => {
    expect(phaseQuery(QUERY, 'closed-since', AT)).toContain(`CloseTime > "${AT}"`);
    expect(phaseQuery(QUERY, 'closed-before', AT)).toContain(`CloseTime <= "${AT}"`);
  });
});

describe('next position', () => {
  const all = listingPhases(undefined);
  it.each([
    ['a token keeps the set', 'running', [7], { at: AT, phase: 'running', token: Uint8Array.from([7]) }],
    ['no token moves to the next set', 'running', undefined, { at: AT, phase: 'closed-since' }],
    ['an empty token is no token', 'closed-since', [], { at: AT, phase: 'closed-before' }],
    ['the last set without a token ends the listing', 'closed-before', undefined, undefined],
  ] as const)('%s', (_name, phase, token, expected) => {
    expect(nextPosition(all, AT, phase, token && Uint8Array.from(token))).toEqual(expected);
  });
  it('a filter reading one set ends with it', () => {
    expect(nextPosition(listingPhases('retrying'), AT, 'running', undefined)).toBeUndefined();
  });
});

describe('listing cursor', () => {
  it('carries the moment, the set and the token for the same query', () => {
    const cursor = encodeListingCursor(QUERY, { at: AT, phase: 'closed-since', token: Uint8Array.from([1, 2, 250]) });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const position = decodeListingCursor(cursor, QUERY)!;
    expect(position.at).toBe(AT);
    expect(position.phase).toBe('closed-since');
    expect([...position.token!]).toEqual([1, 2, 250]);
    expect(decodeListingCursor(encodeListingCursor(QUERY, { at: AT, phase: 'closed-before' }), QUERY)).toEqual({ at: AT, phase: 'closed-before' });
  });
  const body = (fields: object) => Buffer.from(JSON.stringify({ query: QUERY, at: AT, phase: 'running', ...fields })).toString('base64url');
  it.each([
    ['made for other filters', encodeListingCursor(`${QUERY} AND x`, { at: AT, phase: 'running' })],
    ['not JSON', Buffer.from('not-a-cursor').toString('base64url')],
    ['not base64url of anything', '!!!'],
    ['without a moment', body({ at: undefined })],
    ['with a moment that is no date', body({ at: 'yesterday' })],
    ['naming no set', body({ phase: 'all' })],
    ['with an empty token', body({ token: '' })],
    ['with a token that is no string', body({ token: 5 })],
  ])('refuses one %s', (_name, cursor) => {
    expect(decodeListingCursor(cursor, QUERY)).toBeUndefined();
  });
});

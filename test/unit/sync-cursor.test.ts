import { positionCursor, readSyncCursor } from '../../src/personas/sync-cursor';

describe('Personas sync cursor', () => {
  it.each([
    ['no cursor: the first page', undefined, { start: true }],
    ['a position', positionCursor(500), { position: 500 }],
    ['position 0', positionCursor(0), { position: 0 }],
    ['a profile id from a history before positions', 'user-42', { afterProfileId: 'user-42' }],
    ['a profile id that looks like a number', '500', { afterProfileId: '500' }],
    ['a malformed position stays a profile id (never a wrong page)', '\u0000position:-1', { afterProfileId: '\u0000position:-1' }],
    ['a fractional position likewise', '\u0000position:1.5', { afterProfileId: '\u0000position:1.5' }],
  ])('%s', (_name, cursor, expected) => {
    expect(readSyncCursor(cursor)).toEqual(expected);
  });

  it('names no profile id: only the position', () => {
    expect(positionCursor(3)).toBe('\u0000position:3');
  });
});

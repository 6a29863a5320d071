import { erasableIds, erasedBeforeSend } from '../../src/delivery/erasure';
import type { MessageBody } from '../../src/delivery/types';
import { seenUsers } from '../../src/messages/seen-users';

const ERASED_AT = '2026-11-23T12:00:00.000Z';

describe('erasableIds: what a regulation looks a message up by', () => {
  it.each<[string, MessageBody, string[]]>([
    ['user and anonymous id', { type: 'track', userId: 'u1', anonymousId: 'a1' }, ['u1', 'a1']],
    ['anonymous id only', { type: 'page', anonymousId: 'a1' }, ['a1']],
    ["an alias's previous id", { type: 'alias', userId: 'u1', previousId: 'a1' }, ['u1', 'a1']],
    ['the same id twice once', { type: 'identify', userId: 'u1', anonymousId: 'u1' }, ['u1']],
    ['a delete notification: none, it is what the regulation sends', { type: 'delete', userId: 'u1' }, []],
  ])('%s', (_, message, ids) => expect(erasableIds(message)).toEqual(ids));
});

describe('erasedBeforeSend: only messages accepted up to the regulation are held back', () => {
  it.each<[string, Partial<MessageBody>, string | undefined, boolean]>([
    ['never erased', { receivedAt: '2026-11-23T11:00:00.000Z' }, undefined, false],
    ['accepted before the regulation', { receivedAt: '2026-11-23T11:59:59.999Z' }, ERASED_AT, true],
    ['accepted at the same millisecond', { receivedAt: ERASED_AT }, ERASED_AT, true],
    ['accepted after it: the user came back', { receivedAt: '2026-11-23T12:00:00.001Z' }, ERASED_AT, false],
    ['a Personas identify (timestamp only) from before', { timestamp: '2026-11-23T11:00:00.000Z' }, ERASED_AT, true],
    ['no readable time: held back', { receivedAt: 'yesterday' }, ERASED_AT, true],
  ])('%s', (_, fields, erasedAt, held) => expect(erasedBeforeSend({ type: 'track', ...fields }, erasedAt)).toBe(held));
});

describe('seenUsers: the user ids a request shows its source', () => {
  it('counts every call type with a userId, once per user, with the ids seen beside it', () => {
    expect(
      seenUsers([
        { userId: 'u1' },
        { userId: 'u1', anonymousId: 'a1' },
        { userId: 'u2', previousId: 'old-u2' },
        { anonymousId: 'a3' },
        { userId: 'u1', anonymousId: 'a1' },
        { userId: 'u4', anonymousId: 'u4' },
      ]),
    ).toEqual([
      { userId: 'u1', linkedIds: ['a1'] },
      { userId: 'u2', linkedIds: ['old-u2'] },
      { userId: 'u4', linkedIds: [] },
    ]);
  });
});

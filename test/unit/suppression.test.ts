import { isAboutSuppressed, isSuppressed, suppressedBeforeSend, type Suppression } from '../../src/delivery/suppression';
import type { MessageBody } from '../../src/delivery/types';

const AT = '2026-11-23T12:00:00.000Z';
const LIFTED = '2026-11-23T13:00:00.000Z';
const held: Suppression = { suppressedAt: AT };
const lifted: Suppression = { suppressedAt: AT, liftedAt: LIFTED };

describe('isSuppressed: new calls about the id go nowhere while a suppression holds', () => {
  it.each<[string, Suppression[], boolean]>([
    ['never suppressed', [], false],
    ['suppressed', [held], true],
    ['suppressed, then lifted by UNSUPPRESS', [lifted], false],
    ['one id lifted, another still suppressed', [lifted, held], true],
  ])('%s', (_, suppressions, expected) => expect(isSuppressed(suppressions)).toBe(expected));
});

describe('suppressedBeforeSend: what an attempt checks', () => {
  it.each<[string, Partial<MessageBody>, Suppression[], boolean]>([
    ['never suppressed', { receivedAt: '2026-11-23T11:00:00.000Z' }, [], false],
    ['suppressed now, accepted before', { receivedAt: '2026-11-23T11:00:00.000Z' }, [held], true],
    ['suppressed now, accepted after (a call that slipped past ingest)', { receivedAt: '2026-11-23T12:30:00.000Z' }, [held], true],
    ['lifted, accepted before the suppression: its delivery stays stopped', { receivedAt: '2026-11-23T11:00:00.000Z' }, [lifted], true],
    ['lifted, accepted at the same millisecond as the suppression', { receivedAt: AT }, [lifted], true],
    ['lifted, accepted after the suppression began: a new call', { receivedAt: '2026-11-23T13:30:00.000Z' }, [lifted], false],
    ['a Personas identify (timestamp only) from before a lifted suppression', { timestamp: '2026-11-23T11:00:00.000Z' }, [lifted], true],
    ['lifted, no readable time: held back', { receivedAt: 'yesterday' }, [lifted], true],
  ])('%s', (_, fields, suppressions, expected) => expect(suppressedBeforeSend({ type: 'track', ...fields }, suppressions)).toBe(expected));
});

describe('isAboutSuppressed: the ingest rule', () => {
  const suppressed = new Set(['u1']);
  it.each<[string, MessageBody, boolean]>([
    ['a call by the user', { type: 'track', userId: 'u1' }, true],
    ['a call by another user', { type: 'track', userId: 'u2', anonymousId: 'a2' }, false],
    ['a call with the id as anonymousId', { type: 'page', anonymousId: 'u1' }, true],
    ["an alias whose previousId is the user", { type: 'alias', userId: 'u9', previousId: 'u1' }, true],
    ['a delete notification: never suppressed', { type: 'delete', userId: 'u1' }, false],
  ])('%s', (_, message, expected) => expect(isAboutSuppressed(message, suppressed)).toBe(expected));

  it('nothing is suppressed: every call goes through', () => {
    expect(isAboutSuppressed({ type: 'track', userId: 'u1' }, new Set())).toBe(false);
  });
});

import { randomBytes } from 'node:crypto';
import type { MessageBody } from '../../src/delivery/types';
import { newDataKey, unwrapDataKey, wrapDataKey } from '../../src/privacy/data-key-wrap';
import { identifierHash, parseKeyring } from '../../src/privacy/keyring';
import { openSealedIn } from '../../src/privacy/open-sealed';
import { ERASED_BODY, isSealedBody, openBody, sealBody, SealedBodyError, UNREADABLE_BODY } from '../../src/privacy/sealed-body';
import { erasedSubjects, messageSubject } from '../../src/privacy/subjects';

const b64 = () => randomBytes(32).toString('base64');
const A = b64();
const B = b64();
const keyring = parseKeyring(`a=${A}`);

const BODY: MessageBody = { type: 'track', userId: 'u1', event: 'Canary Purchased', properties: { email: 'canary-7f3a@example.com' } };
const flip = (text: string, at = 0) => {
  const bytes = Buffer.from(text, 'base64');
  bytes[at] ^= 1;
  return bytes.toString('base64');
};

describe('sealBody / openBody', () => {
  const key = newDataKey();
  const sealed = sealBody(key, 'h1_subject', 'm1', BODY);

  it('round-trips a body and hides its contents', () => {
    expect(isSealedBody(sealed)).toBe(true);
    // Only long markers: base64 ciphertext contains short strings like `u1` by chance.
    expect(JSON.stringify(sealed)).not.toMatch(/canary-7f3a|Canary Purchased/);
    expect(Buffer.from(sealed.data, 'base64').toString('latin1')).not.toMatch(/canary|Purchased/i);
    expect(openBody(key, 'm1', sealed)).toEqual(BODY);
  });

  it('uses a fresh iv for every seal', () => {
    expect(sealBody(key, 'h1_subject', 'm1', BODY).data).not.toBe(sealed.data);
  });

  it.each([
    ['another key', () => openBody(newDataKey(), 'm1', sealed)],
    ['another subject', () => openBody(key, 'm1', { ...sealed, subject: 'h1_other' })],
    ['another messageId', () => openBody(key, 'm2', sealed)],
    ['altered ciphertext', () => openBody(key, 'm1', { ...sealed, data: flip(sealed.data) })],
    ['altered iv', () => openBody(key, 'm1', { ...sealed, iv: flip(sealed.iv) })],
    ['truncated data', () => openBody(key, 'm1', { ...sealed, data: '' })],
  ])('does not open under %s', (_case, open) => {
    expect(open).toThrow(SealedBodyError);
  });

  it.each([
    [{ sealed: 1, subject: 's', iv: 'x', data: 'y' }, true],
    [{ sealed: true, subject: 's', iv: 'x', data: 'y' }, false],
    [{ sealed: 1, subject: 's', iv: 'x' }, false],
    [BODY, false],
    ['[erased]', false],
    [null, false],
  ])('recognises a sealed body: %j → %s', (value, expected) => {
    expect(isSealedBody(value)).toBe(expected);
  });
});

describe('wrapDataKey / unwrapDataKey', () => {
  const dataKey = newDataKey();

  it('unwraps under the master key it names, also after rotation to another active key', () => {
    const row = wrapDataKey(parseKeyring(`a=${A}`), 'h1_s', dataKey);
    expect(row.masterKeyId).toBe('a');
    expect(row.wrapped.includes(dataKey)).toBe(false);
    const rotated = parseKeyring(`a=${A},b=${B}`, 'b');
    expect(unwrapDataKey(rotated, 'h1_s', row).equals(dataKey)).toBe(true);
    expect(wrapDataKey(rotated, 'h1_s', dataKey).masterKeyId).toBe('b');
  });

  it('fails naming the master key id, never key bytes, when that key is gone', () => {
    const row = wrapDataKey(parseKeyring(`a=${A}`), 'h1_s', dataKey);
    const withoutA = parseKeyring(`b=${B}`);
    expect(() => unwrapDataKey(withoutA, 'h1_s', row)).toThrow(/master key "a".*not listed/);
    try {
      unwrapDataKey(withoutA, 'h1_s', row);
    } catch (err) {
      expect((err as Error).message).not.toContain(A);
    }
  });

  it.each([
    ['another subject', (row: ReturnType<typeof wrapDataKey>) => unwrapDataKey(keyring, 'h1_other', row)],
    ['an altered row', (row: ReturnType<typeof wrapDataKey>) => unwrapDataKey(keyring, 'h1_s', { ...row, wrapped: Buffer.from(flip(row.wrapped.toString('base64'), 20), 'base64') })],
  ])('does not unwrap for %s', (_case, unwrap) => {
    expect(() => unwrap(wrapDataKey(keyring, 'h1_s', dataKey))).toThrow(/does not authenticate/);
  });
});

describe('messageSubject / erasedSubjects', () => {
  it.each([
    ['a userId', 'track', { type: 'track', userId: 'u1', anonymousId: 'a1' }, identifierHash(keyring, 'userId', 'u1')],
    ['an anonymousId alone', 'page', { type: 'page', anonymousId: 'a1' }, identifierHash(keyring, 'anonymousId', 'a1')],
    ['an empty userId', 'track', { type: 'track', userId: '', anonymousId: 'a1' }, identifierHash(keyring, 'anonymousId', 'a1')],
    ['a delete notification', 'delete', { type: 'delete', userId: 'u1' }, undefined],
    ['neither id', 'track', { type: 'track' }, undefined],
  ] as const)('%s', (_case, type, body, expected) => {
    expect(messageSubject(keyring, type, body as MessageBody)).toBe(expected);
  });

  it('erases each id as a userId and as an anonymousId', () => {
    expect(erasedSubjects(keyring, ['u1', 'a1']).sort()).toEqual(
      [identifierHash(keyring, 'userId', 'u1'), identifierHash(keyring, 'anonymousId', 'u1'), identifierHash(keyring, 'userId', 'a1'), identifierHash(keyring, 'anonymousId', 'a1')].sort(),
    );
  });
});

describe('openSealedIn', () => {
  const key = newDataKey();
  const input = { messageId: 'm1', type: 'track', sealedMessage: sealBody(key, 'h1_s', 'm1', BODY) };

  it('opens a sealed body beside its messageId for the reader', async () => {
    const opened = await openSealedIn({ get: async () => key }, [input]);
    expect(opened).toEqual({ changed: true, value: [{ messageId: 'm1', type: 'track', sealedMessage: BODY }] });
  });

  it('shows the erased marker, not an error, when the key is gone', async () => {
    const opened = await openSealedIn({ get: async () => undefined }, [input]);
    expect(opened.value).toEqual([{ messageId: 'm1', type: 'track', sealedMessage: ERASED_BODY }]);
  });

  it('shows the unreadable marker for a body altered or moved, and still opens the others beside it', async () => {
    const altered = { ...input.sealedMessage, data: Buffer.from(Buffer.from(input.sealedMessage.data, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))).toString('base64') };
    const moved = { ...input, messageId: 'm2' };
    const opened = await openSealedIn({ get: async () => key }, [{ ...input, sealedMessage: altered }, moved, input]);
    expect(opened.value).toEqual([
      { messageId: 'm1', type: 'track', sealedMessage: UNREADABLE_BODY },
      { messageId: 'm2', type: 'track', sealedMessage: UNREADABLE_BODY },
      { messageId: 'm1', type: 'track', sealedMessage: BODY },
    ]);
  });

  it('leaves values without sealed bodies as they are', async () => {
    expect(await openSealedIn({ get: async () => key }, { messageId: 'm1', message: BODY })).toEqual({ changed: false, value: { messageId: 'm1', message: BODY } });
  });
});

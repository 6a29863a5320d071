import { createHash } from 'node:crypto';
import { identifierHash, parseKeyring } from '../../src/privacy/keyring';
import { isIdentifierHash, visibleId } from '../../src/privacy/visible-ids';
import { erasedIdHashes } from '../../src/store/erasures';

const keyring = parseKeyring(`k1=${Buffer.alloc(32, 3).toString('base64')}`);
const other = parseKeyring(`k1=${Buffer.alloc(32, 4).toString('base64')}`);

describe('what visibility carries for an id', () => {
  it.each([
    ['a plain id', 'u1'],
    ['an email', 'ada@example.com'],
    ['quotes and backslashes', 'o"brien\\x'],
    ['non-ASCII and emoji', 'zoë 🦊'],
    ['the shape of a hash itself', 'h1_AAAAAAAAAAAAAAAAAAAAAA'],
  ])('with keys, the keyed hash of %s: the same each time, never the id', (_name, id) => {
    const hashed = visibleId(keyring, 'userId', id);
    expect(hashed).toBe(identifierHash(keyring, 'userId', id));
    expect(hashed).toMatch(/^h1_[A-Za-z0-9_-]{22}$/);
    expect(hashed).not.toBe(id);
    expect(visibleId(keyring, 'userId', id)).toBe(hashed);
    expect(visibleId(other, 'userId', id)).not.toBe(hashed);
    expect(isIdentifierHash(hashed)).toBe(true);
  });

  it('hashes a userId and an anonymousId of the same text apart', () => {
    expect(visibleId(keyring, 'userId', 'same')).not.toBe(visibleId(keyring, 'anonymousId', 'same'));
  });

  it('without keys (PAYLOAD_ENCRYPTION=off) is the id itself', () => {
    expect(visibleId(undefined, 'userId', 'o"brien')).toBe('o"brien');
  });

  it.each([
    ['an id', 'u1', false],
    ['the prefix alone', 'h1_', false],
    ['one character short', 'h1_AAAAAAAAAAAAAAAAAAAAA', false],
    ['a character base64url has not', 'h1_AAAAAAAAAAAAAAAAAAAA+A', false],
    ['a hash', 'h1_AAAAAAAAAAAAAAAAAAAAAA', true],
  ])('tells %s from a hash read back from visibility', (_name, value, expected) => {
    expect(isIdentifierHash(value)).toBe(expected);
  });
});

describe('the forms an erased id is kept and looked up in', () => {
  const sha256 = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex');

  it('with keys: written as the keyed hash, looked up by it and by the unkeyed SHA-256 of rows from before keys', () => {
    expect(erasedIdHashes(keyring)('ada')).toEqual([identifierHash(keyring, 'erasedId', 'ada'), sha256('ada')]);
  });

  it('without keys: the unkeyed SHA-256, as before', () => {
    expect(erasedIdHashes(undefined)('ada')).toEqual([sha256('ada')]);
  });
});

import { hashWriteKey, newWriteKey, writeKeyHint } from '../../src/store/write-keys';

describe('write keys', () => {
  it('are 32 url-safe characters and differ every time', () => {
    const keys = Array.from({ length: 50 }, newWriteKey);
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('hash to the same SHA-256 hex digest every time, and differently from each other', () => {
    expect(hashWriteKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashWriteKey('abc')).not.toBe(hashWriteKey('abd'));
  });

  it('are hinted by their last four characters', () => {
    expect(writeKeyHint('0123456789abcdefghijklmnopqrstuv')).toBe('stuv');
  });
});

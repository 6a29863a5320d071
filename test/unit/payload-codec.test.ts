import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { parseKeyring, type Keyring } from '../../src/privacy/keyring';
import { ENCRYPTED_ENCODING, EncryptionCodec, KEY_ID_METADATA } from '../../src/privacy/payload-codec';

const key = () => randomBytes(32).toString('base64');
const A = key();
const B = key();
const ring = (text: string, active = ''): Keyring => parseKeyring(text, active);
const text = (payload: Payload) => Buffer.from(payload.data ?? []).toString('latin1') + JSON.stringify(Object.values(payload.metadata ?? {}).map((v) => Buffer.from(v).toString('latin1')));

const CANARY = { email: 'canary-7f3a@example.com', event: 'Canary Purchased' };
const original = defaultPayloadConverter.toPayload(CANARY);

describe('EncryptionCodec', () => {
  it('round-trips a payload, metadata included, and hides its contents', async () => {
    const codec = new EncryptionCodec(ring(`a=${A}`));
    const [encoded] = await codec.encode([original]);
    expect(Buffer.from(encoded.metadata!.encoding).toString()).toBe(ENCRYPTED_ENCODING);
    expect(Buffer.from(encoded.metadata![KEY_ID_METADATA]).toString()).toBe('a');
    expect(text(encoded)).not.toMatch(/canary|json\/plain/i);
    const [decoded] = await codec.decode([encoded]);
    expect(defaultPayloadConverter.fromPayload(decoded)).toEqual(CANARY);
    expect(Buffer.from(decoded.metadata!.encoding).toString()).toBe('json/plain');
  });

  it('uses a fresh nonce for every payload', async () => {
    const codec = new EncryptionCodec(ring(`a=${A}`));
    const [one, two] = await codec.encode([original, original]);
    expect(Buffer.from(one.data!).equals(Buffer.from(two.data!))).toBe(false);
  });

  it('passes payloads that are not encrypted through on decode', async () => {
    const codec = new EncryptionCodec(ring(`a=${A}`));
    expect(await codec.decode([original])).toEqual([original]);
  });

  it.each<[string, (payload: Payload) => Payload]>([
    ['a flipped ciphertext byte', (p) => ({ ...p, data: Buffer.from(p.data!).map((b, i) => (i === 20 ? b ^ 1 : b)) })],
    ['a flipped tag byte', (p) => ({ ...p, data: Buffer.from(p.data!).map((b, i, all) => (i === all.length - 1 ? b ^ 1 : b)) })],
    ['a truncated payload', (p) => ({ ...p, data: Buffer.from(p.data!).subarray(0, 10) })],
    ['the key id relabelled to another listed key', (p) => ({ ...p, metadata: { ...p.metadata, [KEY_ID_METADATA]: Buffer.from('b') } })],
  ])('refuses %s, naming the key id', async (_, tamper) => {
    const codec = new EncryptionCodec(ring(`a=${A},b=${B}`, 'a'));
    const [encoded] = await codec.encode([original]);
    const error = await codec.decode([tamper(encoded)]).catch((err: Error) => err);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/key "[ab]"/);
  });

  it('names an unlisted key id, and no key bytes', async () => {
    const [encoded] = await new EncryptionCodec(ring(`gone-1=${A}`)).encode([original]);
    const error = (await new EncryptionCodec(ring(`b=${B}`)).decode([encoded]).catch((err: Error) => err)) as Error;
    expect(error.message).toMatch(/key "gone-1", which is not listed in PAYLOAD_KEYS/);
    expect(error.message).not.toContain(A);
    expect(error.message).not.toContain(B);
  });

  describe('rotation', () => {
    it('decodes what key A wrote once B is active, and writes new payloads under B', async () => {
      const [underA] = await new EncryptionCodec(ring(`a=${A}`)).encode([original]);
      const rotated = new EncryptionCodec(ring(`a=${A},b=${B}`));
      expect(defaultPayloadConverter.fromPayload((await rotated.decode([underA]))[0])).toEqual(CANARY);
      const [underB] = await rotated.encode([original]);
      expect(Buffer.from(underB.metadata![KEY_ID_METADATA]).toString()).toBe('b');
    });

    it('fails loudly naming A once A is removed', async () => {
      const [underA] = await new EncryptionCodec(ring(`a=${A}`)).encode([original]);
      await expect(new EncryptionCodec(ring(`b=${B}`)).decode([underA])).rejects.toThrow(/key "a"/);
    });
  });
});

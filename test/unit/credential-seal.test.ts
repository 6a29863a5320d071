import { CredentialSealError, openCredential, sealCredential, type CredentialField } from '../../src/privacy/credential-seal';
import { sealWithKey } from '../../src/privacy/aes-gcm';
import { parseKeyring } from '../../src/privacy/keyring';
import { openedCredentials, sealedCredentials, type PlainCredentials } from '../../src/store/destination-credentials';

const keyring = parseKeyring(`k1=${Buffer.alloc(32, 1).toString('base64')},k2=${Buffer.alloc(32, 2).toString('base64')}`, 'k2');
const header = (name: string, url = 'https://hooks.example.com/a', index = 0): CredentialField => ({ kind: 'header', url, name, index });
const SHARED: CredentialField = { kind: 'sharedSecret' };

describe('a sealed receiver credential', () => {
  it('opens where it was sealed, under the key it names, whichever key is active now', () => {
    const sealed = sealCredential(keyring, 'k1', 'dst_a', header('Authorization'), 'Bearer t0ken');
    expect(sealed).not.toContain('t0ken');
    expect(openCredential(keyring, 'k1', 'dst_a', header('Authorization'), sealed)).toBe('Bearer t0ken');
    expect(sealCredential(keyring, 'k2', 'dst_a', SHARED, 'same')).not.toBe(sealCredential(keyring, 'k2', 'dst_a', SHARED, 'same'));
  });

  it.each<[string, string, CredentialField, string]>([
    ['on another destination', 'dst_b', SHARED, 'destination dst_b: its sealed sharedSecret does not authenticate (altered, or copied from another destination or field)'],
    ['in another field', 'dst_a', { kind: 'signingSecret' }, 'destination dst_a: its sealed signingSecret does not authenticate (altered, or copied from another destination or field)'],
    ['as the previous signing secret', 'dst_a', { kind: 'previousSigningSecret' }, 'destination dst_a: its sealed previousSigningSecret does not authenticate (altered, or copied from another destination or field)'],
    [
      'as a header value',
      'dst_a',
      header('X-Key', 'https://hooks.example.com/a?token=abc', 3),
      'destination dst_a: its sealed webhooks[3].headers.X-Key does not authenticate (altered, or copied from another destination or field)',
    ],
  ])('sealed as the shared secret of dst_a does not open %s, and the error names neither value nor URL', (_case, destinationId, field, message) => {
    const sealed = sealCredential(keyring, 'k2', 'dst_a', SHARED, 'the secret');
    expect(() => openCredential(keyring, 'k2', destinationId, field, sealed)).toThrow(new CredentialSealError(message));
  });

  it.each<[string, CredentialField, CredentialField]>([
    ['another header name', header('X-Key'), header('X-Other')],
    ['the same header of another URL', header('X-Key', 'https://hooks.example.com/a'), header('X-Key', 'https://hooks.example.com/b')],
  ])('a header value does not open as %s', (_case, sealedAs, openedAs) => {
    const sealed = sealCredential(keyring, 'k2', 'dst_a', sealedAs, 'v');
    expect(() => openCredential(keyring, 'k2', 'dst_a', openedAs, sealed)).toThrow(CredentialSealError);
  });

  const mappingHeader = (url: string, mapping = 'Send'): CredentialField => ({ kind: 'mappingHeader', mapping, url, name: 'X-Api-Key', index: 0 });

  it.each<[string, CredentialField]>([
    ['the same mapping pointed at another URL', mappingHeader('https://attacker.example/')],
    ['another mapping name at the same URL', mappingHeader('https://crm.example.com/v1', 'Other')],
  ])('a mapping header value sealed for its mapping URL does not open as %s', (_case, openedAs) => {
    const sealed = sealCredential(keyring, 'k2', 'dst_a', mappingHeader('https://crm.example.com/v1'), 'crm-key');
    expect(openCredential(keyring, 'k2', 'dst_a', mappingHeader('https://crm.example.com/v1'), sealed)).toBe('crm-key');
    expect(() => openCredential(keyring, 'k2', 'dst_a', openedAs, sealed)).toThrow(CredentialSealError);
  });

  it('still opens a mapping header value sealed before it was bound to its URL (name only), and the next write seals it bound', () => {
    // The form from before URL-bound secrets: no mark, AAD of destination, kind, mapping name and header name.
    const legacyAad = Buffer.from(['switchyard-credential-v1', 'dst_a', 'mappingHeader', 'Send', 'X-Api-Key'].join('\0'), 'utf8');
    const legacy = sealWithKey(keyring.keys.get('k2')!, legacyAad, Buffer.from('crm-key', 'utf8')).toString('base64');
    expect(openCredential(keyring, 'k2', 'dst_a', mappingHeader('https://crm.example.com/v1'), legacy)).toBe('crm-key');
    // Marked as URL-bound, the same ciphertext no longer authenticates.
    expect(() => openCredential(keyring, 'k2', 'dst_a', mappingHeader('https://crm.example.com/v1'), `u1.${legacy}`)).toThrow(CredentialSealError);
    const resealed = sealedCredentials(keyring, 'dst_a', {
      shared_secret: null,
      signing_secret: null,
      previous_signing_secret: null,
      webhooks: '[]',
      mappings: JSON.stringify([{ name: 'Send', enabled: true, trigger: 'all', settings: { url: 'https://crm.example.com/v1', method: 'POST', headers: { 'X-Api-Key': 'crm-key' }, data: {} } }]),
    });
    const sealedValue = (JSON.parse(resealed.mappings!) as { settings: { headers: Record<string, string> } }[])[0].settings.headers['X-Api-Key'];
    expect(sealedValue.startsWith('u1.')).toBe(true);
    expect(() => openCredential(keyring, 'k2', 'dst_a', mappingHeader('https://attacker.example/'), sealedValue)).toThrow(CredentialSealError);
  });

  it('names the key when it is not listed, or when the process has no keys', () => {
    const sealed = sealCredential(keyring, 'k1', 'dst_a', SHARED, 'the secret');
    expect(() => openCredential(parseKeyring(`k2=${Buffer.alloc(32, 2).toString('base64')}`), 'k1', 'dst_a', SHARED, sealed)).toThrow(
      'destination dst_a: its credentials are sealed under payload key "k1", which is not listed in PAYLOAD_KEYS (listed: k2)',
    );
    expect(() => openCredential(undefined, 'k1', 'dst_a', SHARED, sealed)).toThrow(
      'destination dst_a: its credentials are sealed under payload key "k1", and this process has no payload keys (PAYLOAD_ENCRYPTION=off); list the keys in PAYLOAD_KEYS',
    );
    expect(() => openCredential(keyring, 'k1', 'dst_a', SHARED, 'dHJ1bmNhdGVk')).toThrow('its sealed sharedSecret does not authenticate');
  });
});

describe("a destination row's credential columns", () => {
  const plain: PlainCredentials = {
    shared_secret: 'the-shared-secret',
    signing_secret: 'whsec_current',
    previous_signing_secret: null,
    webhooks: JSON.stringify([
      { url: 'https://hooks.example.com/a', headers: { Authorization: 'Bearer a' } },
      { url: 'https://hooks.example.com/b', headers: {} },
    ]),
  };

  it('with keys: every value sealed under the active key, null staying null, URLs and header names readable; opened back as they were', () => {
    const sealed = sealedCredentials(keyring, 'dst_a', plain);
    expect(sealed.credentials_key_id).toBe('k2');
    expect(sealed.previous_signing_secret).toBeNull();
    expect(JSON.stringify(sealed)).not.toMatch(/the-shared-secret|whsec_current|Bearer a/);
    expect(JSON.parse(sealed.webhooks)).toEqual([
      { url: 'https://hooks.example.com/a', headers: { Authorization: expect.any(String) } },
      { url: 'https://hooks.example.com/b', headers: {} },
    ]);
    expect(openedCredentials(keyring, { id: 'dst_a', ...sealed })).toEqual(plain);
    expect(() => openedCredentials(keyring, { id: 'dst_b', ...sealed })).toThrow(CredentialSealError);
  });

  it('without keys (PAYLOAD_ENCRYPTION=off): stored as given with no key id, and such a row reads as it is, with or without keys', () => {
    const stored = sealedCredentials(undefined, 'dst_a', plain);
    expect(stored).toEqual({ ...plain, credentials_key_id: null });
    expect(openedCredentials(keyring, { id: 'dst_a', ...stored })).toEqual(plain);
    expect(openedCredentials(undefined, { id: 'dst_a', ...stored })).toEqual(plain);
  });

  it('a sealed row without any credential reads without keys: there is nothing to open', () => {
    const empty = sealedCredentials(keyring, 'dst_a', { shared_secret: null, signing_secret: null, previous_signing_secret: null, webhooks: '[]' });
    expect(openedCredentials(undefined, { id: 'dst_a', ...empty })).toEqual({ shared_secret: null, signing_secret: null, previous_signing_secret: null, webhooks: '[]' });
  });
});

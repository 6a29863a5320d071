import { loadConfig } from '../../src/config';
import { describeConnection, temporalConnectionOptions } from '../../src/temporal/connection-options';

const PEM = (name: string) => Buffer.from(`-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----\n`);
const files: Record<string, Buffer> = { '/ca.pem': PEM('ca'), '/client.pem': PEM('client'), '/client.key': PEM('key'), '/notes.txt': Buffer.from('hello') };
const readFile = (path: string) => {
  const content = files[path];
  if (!content) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
  return content;
};
const options = (env: NodeJS.ProcessEnv) => temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: 'temporal.example:7233', ...env }), readFile);

describe('temporalConnectionOptions: how every Temporal connection is made', () => {
  it.each([
    ['nothing set: plaintext', {}, { address: 'temporal.example:7233' }],
    ['TEMPORAL_TLS=true: TLS with the system roots', { TEMPORAL_TLS: 'true' }, { tls: {} }],
    ['a CA: TLS trusting it', { TEMPORAL_TLS_CA: '/ca.pem' }, { tls: { serverRootCACertificate: PEM('ca') } }],
    ['cert and key: mutual TLS', { TEMPORAL_TLS_CERT: '/client.pem', TEMPORAL_TLS_KEY: '/client.key' }, { tls: { clientCertPair: { crt: PEM('client'), key: PEM('key') } } }],
    ['a server name: TLS verified against it', { TEMPORAL_TLS_SERVER_NAME: 'frontend.internal' }, { tls: { serverNameOverride: 'frontend.internal' } }],
    ['an API key: TLS with system roots, the key and the namespace header', { TEMPORAL_API_KEY: 'k', TEMPORAL_NAMESPACE: 'ns.acct' }, { tls: {}, apiKey: 'k', metadata: { 'temporal-namespace': 'ns.acct' } }],
    ['an API key with TEMPORAL_TLS=false: plaintext with the key', { TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }, { apiKey: 'k' }],
  ])('%s', (_name, env, expected) => {
    const result = options(env);
    expect(result).toMatchObject(expected);
    if (!('tls' in expected)) expect(result.tls).toBeUndefined();
  });

  it.each([
    ['a missing file names the variable and the path', { TEMPORAL_TLS_CA: '/missing.pem' }, 'Invalid TEMPORAL_TLS_CA: cannot read /missing.pem (ENOENT)'],
    ['a file that is not PEM', { TEMPORAL_TLS_CA: '/notes.txt' }, 'Invalid TEMPORAL_TLS_CA: /notes.txt is not a PEM file'],
    ['a missing key file', { TEMPORAL_TLS_CERT: '/client.pem', TEMPORAL_TLS_KEY: '/nokey' }, 'Invalid TEMPORAL_TLS_KEY: cannot read /nokey (ENOENT)'],
    ['a certificate without its key', { TEMPORAL_TLS_CERT: '/client.pem' }, 'Invalid TEMPORAL_TLS_CERT: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together'],
    ['a key without its certificate', { TEMPORAL_TLS_KEY: '/client.key' }, 'Invalid TEMPORAL_TLS_KEY: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together'],
    ['TLS off with a CA', { TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA: '/ca.pem' }, 'Invalid TEMPORAL_TLS: false, yet TEMPORAL_TLS_CA is set'],
  ])('refuses at start-up: %s', (_name, env, message) => {
    expect(() => options(env)).toThrow(message);
  });

  it('never shows the API key in its description', () => {
    const described = describeConnection(options({ TEMPORAL_API_KEY: 'secret-key-123', TEMPORAL_TLS_CERT: '/client.pem', TEMPORAL_TLS_KEY: '/client.key' }));
    expect(described).toBe('temporal.example:7233 (mutual TLS, API key)');
    expect(described).not.toContain('secret-key-123');
  });

  it('refuses a TEMPORAL_TLS that is neither true nor false', () => {
    expect(() => loadConfig({ TEMPORAL_TLS: 'yes' })).toThrow('Invalid TEMPORAL_TLS: "yes" is not true or false');
  });
});

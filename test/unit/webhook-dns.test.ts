import { dnsBudget, localAddresses, parseHostsFile, triesNextAddress } from '../../src/delivery/webhook-dns';

describe('dnsBudget: a lookup ends within half of DELIVERY_TIMEOUT', () => {
  it.each([
    [5_000, { totalMs: 2_500, firstTryMs: 833, tries: 2 }],
    [1_000, { totalMs: 500, firstTryMs: 166, tries: 2 }],
    [1, { totalMs: 1, firstTryMs: 1, tries: 2 }],
  ])('DELIVERY_TIMEOUT %i ms → %j', (timeoutMs, budget) => {
    expect(dnsBudget(timeoutMs)).toEqual(budget);
  });
});

describe('triesNextAddress: only errors that say this address, not the receiver, is out of reach', () => {
  it.each([
    ['ECONNREFUSED', true],
    ['EHOSTUNREACH', true],
    ['ENETUNREACH', true],
    ['EADDRNOTAVAIL', true],
    ['EAFNOSUPPORT', true],
    ['UND_ERR_CONNECT_TIMEOUT', false],
    ['ERR_TLS_CERT_ALTNAME_INVALID', false],
    ['ECONNRESET', false],
    [undefined, false],
  ])('%s → %s', (code, expected) => {
    expect(triesNextAddress(code)).toBe(expected);
  });
});

const HOSTS = `# The container's hosts file
127.0.0.1	localhost
::1	localhost ip6-localhost ip6-loopback
172.18.0.5	Receiver.internal receiver   # added by compose
172.18.0.5	receiver
`;

describe('localAddresses: the hosts file first, then RFC 6761 localhost, else DNS', () => {
  const hosts = parseHostsFile(HOSTS);
  it.each([
    ['localhost', ['127.0.0.1', '::1']],
    ['LOCALHOST.', ['127.0.0.1', '::1']],
    ['ip6-localhost', ['::1']],
    ['receiver.internal', ['172.18.0.5']],
    ['receiver', ['172.18.0.5']],
    ['hooks.localhost', ['127.0.0.1', '::1']],
    ['hooks.example.com', undefined],
    ['localhost.example.com', undefined],
  ])('%s → %j', (hostname, expected) => {
    expect(localAddresses(hostname, hosts)).toEqual(expected);
  });

  it('answers localhost with loopback even when the hosts file is empty or missing', () => {
    expect(localAddresses('localhost', parseHostsFile(''))).toEqual(['127.0.0.1', '::1']);
  });
});

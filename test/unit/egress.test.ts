import { egressRefusal, egressRefusalReason, parseAllowlist, savedUrlEgressRefusal } from '../../src/delivery/egress';
import { classifyError } from '../../src/delivery/outcome';
import { EGRESS_REFUSED } from '../../src/delivery/egress';
import { loadConfig } from '../../src/config';

const none = parseAllowlist([]);

describe('egressRefusal: only global unicast addresses are reachable by default', () => {
  it.each([
    ['127.0.0.1', /loopback/],
    ['127.255.255.254', /loopback/],
    ['10.0.0.1', /private \(RFC 1918\)/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /link-local .*metadata/],
    ['169.254.0.1', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.255', /carrier-grade NAT/],
    ['0.0.0.0', /unspecified/],
    ['0.1.2.3', /unspecified/],
    ['255.255.255.255', /broadcast/],
    ['224.0.0.1', /multicast/],
    ['192.0.2.10', /reserved or documentation/],
    ['198.18.0.1', /reserved/],
    ['240.0.0.1', /reserved/],
    ['192.0.0.8', /reserved/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fe80::1', /link-local/],
    ['fc00::1', /unique-local/],
    ['fd12:3456:789a::1', /unique-local/],
    ['::ffff:127.0.0.1', /IPv4-mapped/],
    ['::ffff:10.0.0.1', /IPv4-mapped/],
    ['::ffff:169.254.169.254', /IPv4-mapped/],
    ['::ffff:8.8.8.8', /IPv4-mapped/],
    ['64:ff9b::a00:1', /NAT64/],
    ['2002:a00:1::', /6to4/],
    ['2001::1', /Teredo/],
    ['2001:db8::1', /reserved/],
    ['ff02::1', /multicast/],
    ['fec0::1', /site-local/],
    ['::7f00:1', /not a global unicast/],
    ['100::1', /discard/],
    ['not-an-ip', /not an IP address/],
  ])('refuses %s', (address, reason) => {
    expect(egressRefusal(address, none)).toMatch(reason);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '100.63.255.255', '100.128.0.1', '172.32.0.1', '169.253.255.255', '2606:4700:4700::1111', '2a00:1450:4001:82a::200e'])(
    'lets %s through',
    (address) => {
      expect(egressRefusal(address, none)).toBeUndefined();
    },
  );
});

describe('EGRESS_ALLOWLIST admits private ranges on purpose', () => {
  const allowlist = parseAllowlist(['127.0.0.0/8', '::1/128', '10.20.0.0/16']);

  it.each(['127.0.0.1', '127.9.9.9', '::1', '10.20.30.40', '::ffff:127.0.0.1', '::ffff:10.20.0.1'])('admits %s', (address) => {
    expect(egressRefusal(address, allowlist)).toBeUndefined();
  });

  it.each([
    ['10.21.0.1', /private/],
    ['192.168.0.1', /private/],
    ['169.254.169.254', /link-local/],
    ['::ffff:10.21.0.1', /IPv4-mapped/],
    ['::2', /not a global unicast/],
    ['fd00::1', /unique-local/],
  ])('still refuses %s', (address, reason) => {
    expect(egressRefusal(address, allowlist)).toMatch(reason);
  });

  it('rejects an entry that is not a CIDR range, naming it', () => {
    expect(() => parseAllowlist(['127.0.0.0/8', 'localhost'])).toThrow('"localhost" is not a CIDR range');
    expect(() => parseAllowlist(['10.0.0.0/33'])).toThrow('"10.0.0.0/33" is not a CIDR range');
  });

  it('stops start-up on a bad EGRESS_ALLOWLIST, naming the variable', () => {
    expect(() => loadConfig({ EGRESS_ALLOWLIST: '127.0.0.0/8, 10.0.0.1' })).toThrow('Invalid EGRESS_ALLOWLIST: "10.0.0.1" is not a CIDR range');
    expect(loadConfig({ EGRESS_ALLOWLIST: ' 127.0.0.0/8 , ::1/128 ' }).egressAllowlist).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadConfig({}).egressAllowlist).toEqual([]);
  });
});

describe('a refused connection is a permanent attempt outcome with a clear reason', () => {
  it('names the host, the address and the fix', () => {
    expect(egressRefusalReason('internal.example', '10.0.0.1 is a private (RFC 1918) address')).toBe(
      'egress refused: internal.example resolves to 10.0.0.1, a private (RFC 1918) address; no request was sent (EGRESS_ALLOWLIST can admit a private range on purpose)',
    );
    expect(egressRefusalReason('10.0.0.1', '10.0.0.1 is a private (RFC 1918) address')).toMatch(/^egress refused: 10\.0\.0\.1 is a private/);
  });

  it('is not retried', () => {
    expect(classifyError(EGRESS_REFUSED, 'egress refused: x', 5000)).toEqual({ kind: 'permanent', reason: 'egress refused: x' });
  });
});

describe('savedUrlEgressRefusal: a URL saved in a setting whose host the egress rule refuses', () => {
  const loopback = parseAllowlist(['127.0.0.0/8', '::1/128']);
  it.each([
    ['http://169.254.169.254/x', none, /^169\.254\.169\.254 is a link-local address .*; Switchyard never sends there \(EGRESS_ALLOWLIST/],
    ['https://10.1.2.3/hook', none, /private \(RFC 1918\)/],
    ['http://[::1]:9000/hook', none, /loopback/],
    ['http://[::ffff:169.254.169.254]/', none, /IPv4-mapped/],
    ['http://0x7f.1/hook', none, /^127\.0\.0\.1 is a loopback address/],
    ['http://localhost:9000/hook', none, /^localhost is this machine \(a loopback address\)/],
    ['http://api.localhost/hook', none, /this machine/],
    ['http://127.0.0.1:9000/hook', loopback, undefined],
    ['http://localhost:9000/hook', loopback, undefined],
    ['https://ops.example.com/switchyard', none, undefined],
    ['https://93.184.215.14/hook', none, undefined],
    ['not a url', none, undefined],
  ])('%s', (url, allowlist, expected) => {
    const refusal = savedUrlEgressRefusal(url, allowlist);
    if (expected === undefined) expect(refusal).toBeUndefined();
    else expect(refusal).toMatch(expected);
  });
});

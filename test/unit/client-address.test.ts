import { fastifyTrustProxy, limitedAddress } from '../../src/api/client-address';

describe('fastifyTrustProxy (TRUST_PROXY as Fastify takes it)', () => {
  it.each([[false], [true], [['10.0.0.0/8', 'loopback']]] as const)('passes %j through', (setting) => {
    expect(fastifyTrustProxy(setting as boolean | string[])).toEqual(setting);
  });

  it('turns a hop count into trust of that many nearest hops, counted from the socket', () => {
    const trust = fastifyTrustProxy(2) as (address: string, hop: number) => boolean;
    expect([0, 1, 2, 3].map((hop) => trust('10.0.0.1', hop))).toEqual([true, true, false, false]);
  });
});

describe('limitedAddress: the client address a limit counts, never one the client chose', () => {
  // Fastify's request.ips: the socket's address first, then X-Forwarded-For from right to left, as far as trusted.
  it.each([
    ['no proxy trusted: the socket', false, { ip: '198.51.100.7', ips: undefined }, '198.51.100.7'],
    ['true: what the nearest proxy saw, not the leftmost entry', true, { ip: '192.0.2.66', ips: ['10.0.0.1', '203.0.113.5', '192.0.2.66'] }, '203.0.113.5'],
    ['true without X-Forwarded-For: the socket', true, { ip: '10.0.0.1', ips: ['10.0.0.1'] }, '10.0.0.1'],
    ['a hop count: the first address past the trusted hops', 1, { ip: '203.0.113.5', ips: ['10.0.0.1', '203.0.113.5'] }, '203.0.113.5'],
    ['addresses/CIDRs: the first address not among them', ['10.0.0.0/8'], { ip: '203.0.113.5', ips: ['10.0.0.1', '203.0.113.5'] }, '203.0.113.5'],
  ] as const)('%s', (_name, setting, request, address) => {
    expect(limitedAddress(request as { ip: string; ips?: string[] }, setting as boolean | number | string[])).toBe(address);
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { configWarnings, deliveryPolicy, loadConfig } from '../../src/config';
import { formatDuration, parseDuration } from '../../src/delivery/duration';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/workflows/search-attributes';

const ROOT = path.resolve(__dirname, '../..');

describe('parseDuration', () => {
  it.each([['500ms', 500], ['5s', 5_000], ['10m', 600_000], ['4h', 14_400_000], ['1d', 86_400_000], ['1.5s', 1_500], ['250', 250]])('%s → %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
  it.each(['', 'soon', '5 hours', '-1s', '1w'])('rejects %j with an example of what works', (text) => {
    expect(() => parseDuration(text)).toThrow(/is not a duration \(use e\.g\. 500ms, 5s, 10m, 4h, 1d\)/);
  });
  it('formats back', () => {
    expect([formatDuration(14_400_000), formatDuration(5_000), formatDuration(1_500)]).toEqual(['4h', '5s', '1500ms']);
  });
});

describe('loadConfig', () => {
  it('has the seed values as defaults: 4 h retry window, 5 s response deadline', () => {
    const config = loadConfig({});
    expect(deliveryPolicy(config)).toEqual({ retryWindowMs: 4 * 3_600_000, timeoutMs: 5_000, initialBackoffMs: 1_000, maxBackoffMs: 600_000, firstAttemptLocal: true, hardWindow: true, deliveredImplied: true, maxHoldMs: 72 * 3_600_000, holdCheckMs: 300_000 });
    expect(config.port).toBe(8080);
    // Loopback unless HOST says otherwise: a quick start is not on the network (the image sets 0.0.0.0).
    expect(config.host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(config.databasePath).toBe(path.join('data', 'switchyard.db'));
  });

  it('names the variable and the rule when a value is bad', () => {
    expect(() => loadConfig({ DELIVERY_RETRY_WINDOW: 'forever' })).toThrow('Invalid DELIVERY_RETRY_WINDOW: "forever" is not a duration');
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow('Invalid PORT: "eighty" is not a non-negative integer');
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT: '40s', HTTP_REQUEST_TIMEOUT: '30s' })).toThrow('Invalid HTTP_HEADERS_TIMEOUT: it must not be longer than HTTP_REQUEST_TIMEOUT');
    expect(loadConfig({ HTTP_HEADERS_TIMEOUT: '40s', HTTP_REQUEST_TIMEOUT: '0' }).httpHeadersTimeout).toBe(40_000);
  });

  it.each([
    [{}, { corsOrigins: '*', publicUrl: '', trustProxy: false }],
    [{ CORS_ORIGINS: 'https://shop.example.com, http://localhost:3000' }, { corsOrigins: ['https://shop.example.com', 'http://localhost:3000'] }],
    [{ PUBLIC_URL: 'https://events.example.com/' }, { publicUrl: 'https://events.example.com' }],
    [{ PUBLIC_URL: 'https://example.com/switchyard' }, { publicUrl: 'https://example.com/switchyard' }],
    [{ TRUST_PROXY: 'true' }, { trustProxy: true }],
    [{ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,loopback' }, { trustProxy: ['10.0.0.0/8', '127.0.0.1', 'loopback'] }],
    [{ TRUST_PROXY: '2' }, { trustProxy: 2 }],
    [{}, { codecCorsOrigins: [] }],
    [{ CODEC_CORS_ORIGINS: 'https://cloud.temporal.io, http://localhost:8233' }, { codecCorsOrigins: ['https://cloud.temporal.io', 'http://localhost:8233'] }],
  ])('web and proxy settings %j → %j', (env, expected) => {
    expect(loadConfig(env)).toMatchObject(expected);
  });

  it.each([
    [{ CORS_ORIGINS: 'https://shop.example.com/' }, 'Invalid CORS_ORIGINS: "https://shop.example.com/" is not an origin'],
    [{ CORS_ORIGINS: 'shop.example.com' }, 'Invalid CORS_ORIGINS: "shop.example.com" is not an origin'],
    [{ CORS_ORIGINS: '*,https://a.example' }, 'Invalid CORS_ORIGINS: "*" allows every origin'],
    [{ PUBLIC_URL: 'events.example.com' }, 'Invalid PUBLIC_URL: "events.example.com" is not an absolute URL'],
    [{ PUBLIC_URL: 'ftp://events.example.com' }, 'Invalid PUBLIC_URL: "ftp://events.example.com" must be an http or https URL'],
    [{ PUBLIC_URL: 'https://events.example.com/?a=1' }, 'must be an http or https URL without credentials, query or fragment'],
    [{ TRUST_PROXY: '0' }, 'Invalid TRUST_PROXY: "0": a hop count is at least 1 (false trusts no proxy)'],
    [{ TRUST_PROXY: '-1' }, 'Invalid TRUST_PROXY: "-1" is not true, false, a hop count'],
    [{ TRUST_PROXY: 'yes' }, 'Invalid TRUST_PROXY: "yes" is not true, false, a hop count, an IP address, a CIDR'],
    [{ CODEC_CORS_ORIGINS: '*' }, 'Invalid CODEC_CORS_ORIGINS: "*" is not allowed here: name each Temporal Web UI origin'],
    [{ CODEC_CORS_ORIGINS: 'http://localhost:8233/' }, 'Invalid CODEC_CORS_ORIGINS: "http://localhost:8233/" is not an origin'],
  ])('refuses %j naming the variable and the rule', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('refuses an admin token shorter than 32 characters, without repeating it', () => {
    const short = 'x'.repeat(31);
    expect(() => loadConfig({ ADMIN_TOKEN: short })).toThrow('Invalid ADMIN_TOKEN: is shorter than 32 characters; generate one with `openssl rand -base64 32`');
    expect(() => loadConfig({ ADMIN_TOKEN: short })).not.toThrow(short);
    expect(loadConfig({ ADMIN_TOKEN: 'x'.repeat(32) }).adminToken).toBe('x'.repeat(32));
    expect(loadConfig({}).adminToken).toBe('');
  });
});

describe('configWarnings', () => {
  it.each([
    [{}, []],
    [{ TRUST_PROXY: 'true' }, ['TRUST_PROXY is on and PUBLIC_URL is not set: the source settings route takes apiHost from X-Forwarded-Host/-Proto and answers Cache-Control: private (no CDN may cache it); set PUBLIC_URL to the URL clients reach this API at']],
    [{ TRUST_PROXY: '1' }, [expect.stringMatching(/^TRUST_PROXY is on and PUBLIC_URL is not set/)]],
    [{ TRUST_PROXY: 'loopback' }, [expect.stringMatching(/^TRUST_PROXY is on and PUBLIC_URL is not set/)]],
    [{ TRUST_PROXY: 'true', PUBLIC_URL: 'https://events.example.com' }, []],
    [{ PUBLIC_URL: 'https://events.example.com' }, []],
  ])('%j → %j', (env, warnings) => {
    expect(configWarnings(loadConfig(env))).toEqual(warnings);
  });
});

describe('documentation and scripts stay in step with the code', () => {
  it('scripts/temporal-dev.sh registers every search attribute the workflows use', () => {
    const script = readFileSync(path.join(ROOT, 'scripts/temporal-dev.sh'), 'utf8');
    for (const key of ALL_SEARCH_ATTRIBUTES) {
      const type = { KEYWORD: 'Keyword', KEYWORD_LIST: 'KeywordList' }[key.type as string];
      expect(script).toContain(`--search-attribute ${key.name}=${type}`);
    }
  });

  it('scripts/temporal-server.sh registers exactly the search attributes the workflows use', () => {
    const script = readFileSync(path.join(ROOT, 'scripts/temporal-server.sh'), 'utf8');
    const list = /^search_attributes=\(\n([\s\S]*?)\n\)/m.exec(script)?.[1] ?? '';
    const fromScript = list.split('\n').map((line) => line.trim()).filter(Boolean).sort();
    const fromCode = ALL_SEARCH_ATTRIBUTES.map((key) => `${key.name}=${{ KEYWORD: 'Keyword', KEYWORD_LIST: 'KeywordList' }[key.type as string]}`).sort();
    expect(fromScript).toEqual(fromCode);
  });
});

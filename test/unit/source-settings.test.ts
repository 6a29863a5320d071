import { isBrowserPath } from '../../src/api/cors';
import { INGEST_ROUTES } from '../../src/api/ingest-routes';
import { publicEndpoint, settingsCaching, sourceSettings } from '../../src/api/source-settings';

describe('INGEST_ROUTES', () => {
  it("serves each call type under its long name and its first letter (Segment's browser and mobile paths), and batch as /v1/b", () => {
    expect(INGEST_ROUTES.map((r) => `${r.path}→${r.kind === 'call' ? r.type : 'batch'}`)).toEqual([
      '/v1/identify→identify', '/v1/i→identify', '/v1/track→track', '/v1/t→track', '/v1/page→page', '/v1/p→page',
      '/v1/screen→screen', '/v1/s→screen', '/v1/group→group', '/v1/g→group', '/v1/alias→alias', '/v1/a→alias',
      '/v1/batch→batch', '/v1/b→batch', '/v1/import→batch',
    ]);
  });
});

describe('isBrowserPath (the only paths that answer CORS)', () => {
  it.each([
    ['/v1/t', true],
    ['/v1/b?x=1', true],
    ['/v1/track', true],
    ['/v1/projects/wk_abc/settings', true],
    ['/v1/projects/wk_abc/settings/extra', false],
    ['/v1/projects//settings', false],
    ['/admin/sources', false],
    ['/health', false],
    ['/openapi.json', false],
    ['/v1/x', false],
  ])('%s → %s', (path, allowed) => {
    expect(isBrowserPath(path)).toBe(allowed);
  });
});

describe('publicEndpoint', () => {
  it.each([
    ['', { protocol: 'http', host: 'localhost:8080' }, { protocol: 'http', apiHost: 'localhost:8080/v1' }],
    ['', { protocol: 'https', host: 'events.example.com' }, { protocol: 'https', apiHost: 'events.example.com/v1' }],
    ['', { protocol: 'http', host: '[::1]:8080' }, { protocol: 'http', apiHost: '[::1]:8080/v1' }],
    ['https://events.example.com', { protocol: 'http', host: 'internal:8080' }, { protocol: 'https', apiHost: 'events.example.com/v1' }],
    ['https://example.com/switchyard', { protocol: 'http', host: 'internal:8080' }, { protocol: 'https', apiHost: 'example.com/switchyard/v1' }],
    ['http://127.0.0.1:3000', { protocol: 'https', host: 'x' }, { protocol: 'http', apiHost: '127.0.0.1:3000/v1' }],
  ] as const)('PUBLIC_URL %j, request %j → %j', (publicUrl, request, endpoint) => {
    expect(publicEndpoint(publicUrl, request)).toEqual(endpoint);
  });

  it.each(['evil.com/path', 'a b', 'x"><script>', 'host:port', ''])('refuses Host %j, naming the header and the rule', (host) => {
    expect(publicEndpoint('', { protocol: 'http', host })).toEqual({ problem: 'host: header must be a host name or IP address with an optional port (or set PUBLIC_URL)' });
  });
});

describe('sourceSettings', () => {
  const settings = sourceSettings('wk_secret', { protocol: 'https', apiHost: 'events.example.com/v1' });

  it("gives analytics-next's Segment.io integration the write key, apiHost (no scheme, ends in /v1) and protocol", () => {
    expect(settings.integrations).toEqual({ 'Segment.io': expect.objectContaining({ apiKey: 'wk_secret', apiHost: 'events.example.com/v1', protocol: 'https' }) });
  });

  it('turns off the libraries\' metrics reports to Segment and loads no remote plugin, middleware or device-mode destination', () => {
    expect(settings).toMatchObject({ metrics: { sampleRate: 0 }, remotePlugins: [], enabledMiddleware: {}, middlewareSettings: {}, legacyVideoPluginsEnabled: false });
    expect(Object.keys(settings.integrations)).toEqual(['Segment.io']);
  });

  it('carries nothing about the source but the write key the caller sent', () => {
    const text = JSON.stringify(settings);
    expect(text.match(/wk_secret/g)).toHaveLength(1);
    expect(text).not.toMatch(/src_|sourceId|"name"/);
  });
});

describe('settingsCaching: a reply that depends on forwarded headers is kept from shared caches', () => {
  it.each([
    [{ publicUrl: 'https://events.example.com', trustProxy: true }, { 'cache-control': 'public, max-age=300' }],
    [{ publicUrl: 'https://events.example.com', trustProxy: 1 }, { 'cache-control': 'public, max-age=300' }],
    [{ publicUrl: '', trustProxy: false }, { 'cache-control': 'public, max-age=300' }],
    [{ publicUrl: '', trustProxy: true }, { 'cache-control': 'private, max-age=300', vary: 'X-Forwarded-Host, X-Forwarded-Proto' }],
    [{ publicUrl: '', trustProxy: 2 }, { 'cache-control': 'private, max-age=300', vary: 'X-Forwarded-Host, X-Forwarded-Proto' }],
    [{ publicUrl: '', trustProxy: ['10.0.0.0/8'] }, { 'cache-control': 'private, max-age=300', vary: 'X-Forwarded-Host, X-Forwarded-Proto' }],
  ] as const)('%j → %j', (config, headers) => {
    expect(settingsCaching(config as { publicUrl: string; trustProxy: boolean | number | string[] })).toEqual(headers);
  });
});

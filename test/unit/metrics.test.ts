import { callTypeLabel, createMetrics, ingestRouteLabel } from '../../src/metrics';

describe('ingestRouteLabel', () => {
  it.each([
    ['/v1/track', '/v1/track', '/v1/track'],
    ['/v1/b', '/v1/b', '/v1/b'],
    ['the settings route pattern, never the URL with its write key', '/v1/projects/:writeKey/settings', '/v1/projects/wk_secret/settings'],
  ])('labels %s by its route pattern', (_name, pattern, url) => {
    expect(ingestRouteLabel(pattern, url)).toBe(pattern);
  });

  it('labels a /v1 request no route matched as unmatched, never by its URL', () => {
    expect(ingestRouteLabel(undefined, '/v1/projects/wk_secret/nothing')).toBe('unmatched');
  });

  it.each([
    ['/health', '/health'],
    ['/metrics', '/metrics'],
    ['/admin/sources/:id', '/admin/sources/abc'],
    [undefined, '/nothing-here'],
  ])('does not count %s (not an ingestion route)', (pattern, url) => {
    expect(ingestRouteLabel(pattern, url)).toBeUndefined();
  });
});

describe('callTypeLabel', () => {
  it.each(['identify', 'track', 'page', 'screen', 'group', 'alias'])('keeps the call type %s', (type) => {
    expect(callTypeLabel(type)).toBe(type);
  });
  it('folds anything else into other, so a label set stays closed', () => {
    expect(callTypeLabel('Track')).toBe('other');
    expect(callTypeLabel('wk_secret')).toBe('other');
  });
});

describe('createMetrics', () => {
  it('shows every attempt outcome and delivery status at 0 before the first event, in its own registry', async () => {
    const text = await createMetrics({ defaultMetrics: false }).registry.metrics();
    for (const outcome of ['success', 'retry', 'permanent']) expect(text).toContain(`switchyard_delivery_attempts_total{outcome="${outcome}"} 0`);
    for (const status of ['delivered', 'failed', 'stopped']) expect(text).toContain(`switchyard_deliveries_total{status="${status}"} 0`);
  });
});

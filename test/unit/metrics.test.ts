import { callTypeLabel, countDestination, createMetrics, forgetDestinations, watchWorker, watchDestinations, ingestRouteLabel } from '../../src/metrics';

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
  it('shows every attempt outcome and delivery status of a destination at 0 from its first attempt, in its own registry', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    countDestination(metrics, 'dst_a');
    const text = await metrics.registry.metrics();
    for (const outcome of ['success', 'retry', 'permanent']) expect(text).toContain(`switchyard_delivery_attempts_total{outcome="${outcome}",destination="dst_a"} 0`);
    for (const status of ['delivered', 'failed', 'stopped']) expect(text).toContain(`switchyard_deliveries_total{status="${status}",destination="dst_a"} 0`);
  });
});

describe('the destination label', () => {
  it('drops every series of a destination that is no longer configured, and keeps the others', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    for (const destination of ['dst_kept', 'dst_gone']) {
      countDestination(metrics, destination);
      metrics.deliveryAttempts.inc({ outcome: 'retry', destination });
      metrics.messagesFiltered.inc({ destination, reason: 'consent' });
      metrics.backpressuredWaits.inc({ destination });
    }
    await forgetDestinations(metrics, new Set(['dst_kept']));
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('dst_gone');
    expect(text).toContain('switchyard_delivery_attempts_total{outcome="retry",destination="dst_kept"} 1');
    expect(text).toContain('switchyard_messages_filtered_total{destination="dst_kept",reason="consent"} 1');
  });

  it('reads switched-off URLs and the configured destinations at scrape time, and stamps the task queues being polled', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    countDestination(metrics, 'dst_deleted');
    let disabled = [{ destinationId: 'dst_a', index: 1 }];
    watchWorker(
      metrics,
      {
        configured: async () => ({ destinationIds: new Set(['dst_a']), disabled }),
        pollers: () => [
          { taskQueue: 'q-polling', polling: true },
          { taskQueue: 'q-stopped', polling: false },
        ],
      },
      () => 1_700_000_000_000,
    );
    let text = await metrics.registry.metrics();
    expect(text).toContain('switchyard_webhook_disabled{destination="dst_a",index="1"} 1');
    expect(text).toContain('switchyard_worker_last_poll_timestamp_seconds{task_queue="q-polling"} 1700000000');
    expect(text).not.toContain('q-stopped');
    // Switched back on: the series goes; the deleted destination's counters went with the first scrape.
    disabled = [];
    text = await metrics.registry.metrics();
    expect(text).not.toContain('switchyard_webhook_disabled{');
    expect(text).not.toContain('dst_deleted');
  });

  it('names each destination once in switchyard_destination_info at scrape time; a store that does not answer leaves the last names', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    let list: () => Promise<{ id: string; sourceId: string; name: string; type: string }[]> = async () => [{ id: 'dst_a', sourceId: 'src_1', name: 'CRM', type: 'actions' }];
    watchDestinations(metrics, () => list());
    expect(await metrics.registry.metrics()).toContain('switchyard_destination_info{destination="dst_a",source="src_1",name="CRM",type="actions"} 1');
    list = async () => {
      throw new Error('store away');
    };
    expect(await metrics.registry.metrics()).toContain('name="CRM"');
    list = async () => [{ id: 'dst_a', sourceId: 'src_1', name: 'CRM (EU)', type: 'actions' }];
    const text = await metrics.registry.metrics();
    expect(text).toContain('name="CRM (EU)"');
    expect(text).not.toContain('name="CRM"');
  });
});

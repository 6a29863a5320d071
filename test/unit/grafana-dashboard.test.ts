import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { createMetrics } from '../../src/metrics';

/**
 * The Grafana dashboard beside the alert rules parses, and every series it (and every
 * rule) names is one Switchyard exports (src/metrics.ts; a histogram's _bucket/_sum/_count) or a
 * recording rule of the rules file: a renamed metric fails here, not on an operator's screen.
 */

const DEPLOY = path.join(__dirname, '../../deploy/prometheus');

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
}

const rules = (parse(readFileSync(path.join(DEPLOY, 'switchyard-rules.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((group) => group.rules);
const dashboard = JSON.parse(readFileSync(path.join(DEPLOY, 'switchyard-dashboard.json'), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[]; templating: { list: { query?: unknown }[] } };

/** Every series name a PromQL expression selects: switchyard_… names and recording rules (switchyard:…). */
const namesIn = (expr: string): string[] => [...expr.matchAll(/\bswitchyard[_:][a-z0-9_:]+/g)].map((m) => m[0]);

async function exported(): Promise<Set<string>> {
  const metrics = await createMetrics({ defaultMetrics: false }).registry.getMetricsAsJSON();
  const names = new Set<string>();
  for (const { name, type } of metrics) {
    names.add(name);
    if (String(type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  for (const rule of rules) if (rule.record) names.add(rule.record);
  return names;
}

describe('deploy/prometheus', () => {
  it('ships the six alerts docs/operations.md lists', () => {
    expect(rules.filter((rule) => rule.alert).map((rule) => rule.alert)).toEqual([
      'SwitchyardDeliveryFailureRateHigh',
      'SwitchyardMessagesExhausted',
      'SwitchyardWebhookDisabled',
      'SwitchyardNoWorkerPolling',
      'SwitchyardIngest5xx',
      'SwitchyardFilteredSpike',
    ]);
  });

  it('names only series Switchyard exports, in every rule', async () => {
    const known = await exported();
    const unknown = rules.flatMap((rule) => namesIn(rule.expr)).filter((name) => !known.has(name));
    // The tracking plans' stops (switchyard_messages_filtered_total{reason="plan"}) are the same series.
    expect(unknown).toEqual([]);
  });

  it('parses as a dashboard whose every query names only series Switchyard exports', async () => {
    const known = await exported();
    expect(dashboard.panels.length).toBeGreaterThan(0);
    const exprs = [...dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)), ...dashboard.templating.list.map((v) => (typeof v.query === 'string' ? v.query : ''))];
    const named = exprs.flatMap(namesIn);
    expect(named).toEqual(expect.arrayContaining(['switchyard_delivery_attempts_total', 'switchyard_deliveries_total', 'switchyard_webhook_disabled', 'switchyard_worker_last_poll_timestamp_seconds']));
    expect(named.filter((name) => !known.has(name))).toEqual([]);
  });

  it('names destinations beside their ids: every per-destination panel joins switchyard_destination_info and shows {{name}}', () => {
    const perDestination = dashboard.panels.flatMap((panel) => panel.targets.map((target) => ({ title: panel.title, ...(target as { expr: string; legendFormat?: string }) }))).filter(({ expr }) => expr.includes('destination=~'));
    expect(perDestination.length).toBeGreaterThanOrEqual(6);
    const unnamed = perDestination.filter(({ expr, legendFormat }) => !expr.includes('group_left (name) max by (destination, name) (switchyard_destination_info)') || !legendFormat?.includes('{{name}}'));
    expect(unnamed.map(({ title }) => title)).toEqual([]);
  });
});

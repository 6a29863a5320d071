import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Analytics } from '@segment/analytics-node';
import { ROOT } from '../helpers/processes';
import { ADMIN_TOKEN, basicAuth, startSystem, type TestSystem } from '../helpers/system';
import { nodeArgsFor } from '../helpers/compiled-source';

/**
 * A Segment workspace moves in one command: the fixture export (test/fixtures/segment-exports/
 * workspace: every resource kind Segment's Terraform provider emits) through the real API, store and
 * HCL parser. A dry run writes nothing; applied, it makes what the report says, keeps the write keys
 * given, never stores a masked secret; applied twice, the second run changes nothing.
 */
const FIXTURE = path.join(ROOT, 'test/fixtures/segment-exports/workspace');
const SECRETS = path.join(ROOT, 'test/fixtures/segment-exports/workspace-secrets.json');

function readTree(dir: string, root = dir, files: Record<string, string> = {}): Record<string, string> {
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) readTree(full, root, files);
    else files[path.relative(root, full)] = readFileSync(full, 'utf8');
  }
  return files;
}

let system: TestSystem;
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const files = readTree(FIXTURE);
const secrets = JSON.parse(readFileSync(SECRETS, 'utf8')) as Record<string, Record<string, string>>;

beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system.close();
});

/** The API on 127.0.0.1, listening from the first call on: where a client and the CLI reach it. */
let host: string | undefined;
async function listening(): Promise<string> {
  if (!host) {
    await system.app.listen({ port: 0, host: '127.0.0.1' });
    host = `http://127.0.0.1:${(system.app.server.address() as AddressInfo).port}`;
  }
  return host;
}

type Report = { objects: Array<Record<string, unknown> & { kind: string; segmentId: string; outcome: string }>; counts: Record<string, Record<string, number>>; problems: unknown[]; applied: boolean; guide: string };
const importExport = async (body: Record<string, unknown>) => {
  const reply = await system.app.inject({ method: 'POST', url: '/admin/imports', headers: auth, payload: body });
  expect(reply.statusCode).toBe(200);
  return { report: reply.json<Report>(), text: reply.body };
};
const line = (report: Report, kind: string, segmentId: string) => report.objects.find((o) => o.kind === kind && o.segmentId === segmentId)!;

/** What the fixture imports with its secrets given: the counts the report states (docs/migrating-from-segment.md). */
const EXPECTED_COUNTS = {
  source: { unchanged: 1, changed: 1, cannot: 0 },
  tracking_plan: { unchanged: 0, changed: 1, cannot: 0 },
  destination: { unchanged: 3, changed: 0, cannot: 2 },
  subscription: { unchanged: 2, changed: 0, cannot: 1 },
  filter: { unchanged: 1, changed: 0, cannot: 0 },
  plan_connection: { unchanged: 1, changed: 0, cannot: 0 },
  label: { unchanged: 1, changed: 0, cannot: 0 },
  transformation: { unchanged: 2, changed: 0, cannot: 0 },
  function: { unchanged: 1, changed: 1, cannot: 0 },
  insert_function_instance: { unchanged: 1, changed: 0, cannot: 0 },
  user: { unchanged: 0, changed: 0, cannot: 2 },
  warehouse: { unchanged: 0, changed: 0, cannot: 3 },
  reverse_etl: { unchanged: 0, changed: 0, cannot: 1 },
};

describe('POST /admin/imports with a Segment Terraform export', () => {
  it('reports every object in a dry run and writes nothing; masked secrets and missing write keys are asked for by name', async () => {
    const before = (await system.store.sources.list()).length;
    const { report } = await importExport({ files });
    expect(report.applied).toBe(false);
    expect(report.problems).toEqual([]);
    expect(report.guide).toBe('docs/migrating-from-segment.md');
    expect(report.objects).toHaveLength(25);
    // Without the secrets: both sources would get new keys, the classic destination has no secret yet.
    expect(line(report, 'source', 'qaHm2cZ9vTbX8kLpR4sW1n')).toMatchObject({ outcome: 'changed', changes: [expect.stringContaining('writeKey: not in the export')] });
    expect(line(report, 'destination', '643ea8f292e9257d89a7e8e4')).toMatchObject({ outcome: 'changed', secretsNeeded: ['643ea8f292e9257d89a7e8e4.sharedSecret'] });
    // The destination function moves; the destination running it (metadata.id its hex id) asks for its masked setting.
    // Its display_name is null in the export (Segment's provider drops it): named after the destination running it, said as a change.
    expect(line(report, 'function', 'dfn_6425a1b2c3d4e5f60718293a')).toMatchObject({ outcome: 'changed', name: 'Orders to fulfilment (function)', changes: [expect.stringContaining('display_name: null in the export')] });
    expect(line(report, 'destination', '6425a1b2c3d4e5f607182950')).toMatchObject({ outcome: 'changed', secretsNeeded: ['6425a1b2c3d4e5f607182950.apiKey'] });
    // The insert function moves, and its instance onto the classic destination it names (function_id its hex id).
    expect(line(report, 'function', 'ifnd_6425a1b2c3d4e5f607182940')).toMatchObject({ outcome: 'unchanged' });
    expect(line(report, 'insert_function_instance', '6425a1b2c3d4e5f607182941')).toMatchObject({ outcome: 'unchanged', name: 'Mask emails' });
    expect(line(report, 'destination', '65a0f1e2d3c4b5a697887766')).toMatchObject({ outcome: 'cannot', reason: expect.stringContaining('Braze (Actions) is a Segment catalog destination') });
    expect(line(report, 'destination', '6398655474f111744d9240f8')).toMatchObject({ outcome: 'cannot', reason: expect.stringContaining('its source spa_9xQ2mL7vKcR4tY8wZ1bN3d is not in the export') });
    expect(line(report, 'subscription', '6364eacc13816c38bfb34981:NtPkMrYdpq9PKcnSSt6pK')).toMatchObject({ outcome: 'cannot', reason: expect.stringContaining("Segment's Linked Events enrichment") });
    expect(line(report, 'tracking_plan', 'tp_2XcJ8vQmN4bL7kR1sT9wYz3aEf')).toMatchObject({
      outcome: 'changed',
      changes: [expect.stringContaining('draft-04')],
      warnings: [expect.stringContaining('"Signed Up\\n" has white space around it')],
    });
    for (const o of report.objects.filter((x) => x.outcome === 'cannot')) expect(o.reason).toEqual(expect.any(String));
    expect((await system.store.sources.list()).length).toBe(before);
  });

  it('applies with the secrets: the counts the report states, write keys kept, secrets never answered; a second apply changes nothing', async () => {
    const { report, text } = await importExport({ files, apply: true, secrets });
    expect(report.counts).toEqual(EXPECTED_COUNTS);
    for (const value of ['classic-webhooks-secret-c4f1', secrets.b1TTjVj38UH445ezhJU3Y6.writeKey, secrets['6425a1b2c3d4e5f607182950'].apiKey]) expect(text).not.toContain(value);
    const written = report.objects.filter((o) => o.applied);
    expect(written.map((o) => [o.kind, o.applied])).toEqual([
      ['source', 'created'],
      ['source', 'created'],
      ['tracking_plan', 'created'],
      ['function', 'created'],
      ['function', 'created'],
      ['destination', 'created'],
      ['destination', 'created'],
      ['destination', 'created'],
      ['filter', 'created'],
      ['insert_function_instance', 'created'],
      ['transformation', 'created'],
      ['transformation', 'created'],
      ['plan_connection', 'created'],
    ]);

    // The function, made through POST /admin/functions; the destination runs it with the secret from --secrets (answered masked).
    const fn = (await system.app.inject({ method: 'GET', url: `/admin/functions/${String(line(report, 'function', 'dfn_6425a1b2c3d4e5f60718293a').id)}`, headers: auth })).json();
    expect(fn).toMatchObject({ resourceType: 'DESTINATION', displayName: 'Orders to fulfilment (function)', description: 'Send orders to the fulfilment API', deployedVersion: 1, settings: [{ name: 'apiKey', sensitive: true, required: true }] });
    expect(fn.code).toContain('https://api.example.com/orders?key=${settings.apiKey}');
    const runsIt = (await system.app.inject({ method: 'GET', url: `/admin/destinations/${String(line(report, 'destination', '6425a1b2c3d4e5f607182950').id)}`, headers: auth })).json();
    expect(runsIt).toMatchObject({ type: 'function', functionId: fn.id, name: 'Orders to fulfilment (function)', settings: { apiKey: expect.stringMatching(/^•+f00d$/) } });
    expect((await system.store.destinations.get(runsIt.id))?.function?.settings).toEqual({ apiKey: secrets['6425a1b2c3d4e5f607182950'].apiKey });

    // The insert function instance, made through POST /admin/insert-function-instances on the classic destination.
    const instance = (await system.app.inject({ method: 'GET', url: `/admin/insert-function-instances/${String(line(report, 'insert_function_instance', '6425a1b2c3d4e5f607182941').id)}`, headers: auth })).json();
    expect(instance).toMatchObject({ name: 'Mask emails', enabled: true, functionId: line(report, 'function', 'ifnd_6425a1b2c3d4e5f607182940').id, integrationId: line(report, 'destination', '643ea8f292e9257d89a7e8e4').id });

    // The web source keeps its Segment write key and labels, and is found by its Segment id and label.
    const web = line(report, 'source', 'b1TTjVj38UH445ezhJU3Y6');
    const listed = (await system.app.inject({ method: 'GET', url: '/admin/sources?label=environment:prod', headers: auth })).json<{ sources: Array<Record<string, unknown>> }>().sources;
    expect(listed.find((s) => s.id === web.id)).toMatchObject({ name: 'Web shop (prod)', slug: 'web_shop_prod', segmentId: 'b1TTjVj38UH445ezhJU3Y6', labels: [{ key: 'environment', value: 'prod' }] });
    // Segment's own client, its write key unchanged: only the host is Switchyard's (integrations All: false, so nothing is delivered).
    const analytics = new Analytics({ writeKey: secrets.b1TTjVj38UH445ezhJU3Y6.writeKey, host: await listening(), flushAt: 1, maxRetries: 0 });
    const errors: unknown[] = [];
    analytics.on('error', (err) => errors.push(err));
    const accepted = new Promise<unknown>((resolve) => analytics.track({ userId: 'u1', event: 'Imported', messageId: 'imported-key', integrations: { All: false } }, resolve));
    expect(await accepted).toBeUndefined();
    await analytics.closeAndFlush({ timeout: 20_000 });
    expect(errors).toEqual([]);
    const refused = await system.app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basicAuth('not-the-imported-key-0000') }, payload: { userId: 'u1', event: 'Imported' } });
    expect(refused.statusCode).toBe(401);

    // The classic destination has the secret from --secrets; the Actions one its two subscriptions.
    const classic = (await system.app.inject({ method: 'GET', url: `/admin/destinations/${String(line(report, 'destination', '643ea8f292e9257d89a7e8e4').id)}`, headers: auth })).json();
    expect(classic).toMatchObject({ type: 'webhooks', sharedSecretSet: true, webhooks: [{ url: 'http://127.0.0.1:9/segment-classic' }] });
    const actions = (await system.app.inject({ method: 'GET', url: `/admin/destinations/${String(line(report, 'destination', '6364eacc13816c38bfb34981').id)}`, headers: auth })).json();
    expect(actions.mappings.map((m: { name: string }) => m.name)).toEqual(['Orders to fulfilment', 'Identify to CRM']);
    expect(actions.mappings[1].settings.data.greeting).toEqual({ '@template': 'Hello ${traits.name}, {{traits.name}}' });
    const plan = line(report, 'tracking_plan', 'tp_2XcJ8vQmN4bL7kR1sT9wYz3aEf');
    expect((await system.app.inject({ method: 'GET', url: `/admin/tracking-plans/${String(plan.id)}/sources`, headers: auth })).json()).toEqual({ sourceIds: [web.id] });
    expect((await system.app.inject({ method: 'GET', url: `/admin/tracking-plans/${String(plan.id)}/rules`, headers: auth })).json().rules).toHaveLength(3);
    // The transformation, made through POST /admin/transformations on the web source, whole-source scope.
    const transformation = (await system.app.inject({ method: 'GET', url: `/admin/transformations/${String(line(report, 'transformation', '2aMwQ7nX9pK3vL8cR5tY1sB4dE').id)}`, headers: auth })).json();
    expect(transformation).toMatchObject({ sourceId: web.id, destinationMetadataId: null, name: 'Rename order id', if: "event = 'Order Completed'", propertyRenames: [{ oldName: 'order_id', newName: 'orderId' }] });
    // Scoped to the exported destination function: to the function it became, by the hex of its Switchyard id.
    const scoped = (await system.app.inject({ method: 'GET', url: `/admin/transformations/${String(line(report, 'transformation', '3bNxR8oY0qL4wM9dS6uZ2tC5fF').id)}`, headers: auth })).json();
    expect(scoped).toMatchObject({ sourceId: web.id, destinationMetadataId: String(fn.id).slice('dfn_'.length), name: 'Fulfilment currency' });

    // Applied again: every object found by its Segment id and kept; nothing in the store changed.
    const snapshot = async () => ({
      sources: (await system.store.sources.list()).length,
      functions: (await system.store.functions.list()).map((f) => [f.id, f.updatedAt, f.latestVersion]),
      destinations: [classic.id, actions.id, runsIt.id].map(async (id) => (await system.store.destinations.get(id))?.updatedAt),
      plans: (await system.store.trackingPlans.list()).map((p) => [p.id, p.updatedAt]),
    });
    const first = await snapshot();
    const firstDestinations = await Promise.all(first.destinations);
    const again = await importExport({ files, apply: true, secrets });
    expect(again.report.counts).toEqual(EXPECTED_COUNTS);
    expect(again.report.objects.filter((o) => o.applied).map((o) => o.applied)).toEqual(Array(13).fill('kept'));
    expect(again.report.objects.filter((o) => o.applied).map((o) => o.id)).toEqual(written.map((o) => o.id));
    const second = await snapshot();
    expect(second.sources).toBe(first.sources);
    expect(await Promise.all(second.destinations)).toEqual(firstDestinations);
    expect(second.plans).toEqual(first.plans);
    expect(second.functions).toEqual(first.functions);
  });

  it('updates rather than duplicates when the export changed, matched by Segment id', async () => {
    const changed = { ...files, 'sources/qaHm2cZ9vTbX8kLpR4sW1n.tf': files['sources/qaHm2cZ9vTbX8kLpR4sW1n.tf'].replace('"Orders service"', '"Orders service (renamed)"') };
    const before = (await system.store.sources.list()).length;
    const { report } = await importExport({ files: changed, apply: true, secrets });
    expect(line(report, 'source', 'qaHm2cZ9vTbX8kLpR4sW1n')).toMatchObject({ applied: 'updated', name: 'Orders service (renamed)' });
    expect((await system.store.sources.list()).length).toBe(before);

    // A function's code changed in Segment: the same function gets a new version, deployed, as Segment runs it.
    const file = 'functions/dfn_6425a1b2c3d4e5f60718293a.tf';
    const functions = (await system.store.functions.list()).length;
    const newCode = { ...changed, [file]: files[file].replace("method: 'POST'", "method: 'PUT'") };
    const again = await importExport({ files: newCode, apply: true, secrets });
    const updated = line(again.report, 'function', 'dfn_6425a1b2c3d4e5f60718293a');
    expect(updated).toMatchObject({ applied: 'updated', id: line(report, 'function', 'dfn_6425a1b2c3d4e5f60718293a').id });
    expect((await system.store.functions.list()).length).toBe(functions);
    const fn = (await system.app.inject({ method: 'GET', url: `/admin/functions/${String(updated.id)}`, headers: auth })).json();
    expect(fn).toMatchObject({ latestVersion: 2, deployedVersion: 2, code: expect.stringContaining("method: 'PUT'") });
    expect(line(again.report, 'destination', '6425a1b2c3d4e5f607182950')).toMatchObject({ applied: 'kept' });
  });

  it("a function whose code fails the save checks cannot move, with the 400's reason, in a dry run and applied; nor can a destination running it", async () => {
    const file = 'functions/dfn_6425a1b2c3d4e5f60718293a.tf';
    const batchOnly = { ...files, [file]: files[file].replace('async function onTrack(event, settings) {', 'async function onBatch(events, settings) {') };
    const functions = (await system.store.functions.list()).length;
    for (const apply of [false, true]) {
      const { report } = await importExport({ files: { [file]: batchOnly[file], 'destinations/6425a1b2c3d4e5f607182950.tf': files['destinations/6425a1b2c3d4e5f607182950.tf'] }, apply });
      expect(line(report, 'function', 'dfn_6425a1b2c3d4e5f60718293a')).toMatchObject({ outcome: 'cannot', reason: expect.stringMatching(/^Switchyard refuses it \(400\): code: /) });
      expect(line(report, 'destination', '6425a1b2c3d4e5f607182950')).toMatchObject({ outcome: 'cannot', reason: expect.stringContaining('which cannot move') });
    }
    const broken = await importExport({ files: { [file]: files[file].replace('async function onTrack(event, settings) {', 'async function onTrack(event, settings) {{') } });
    expect(line(broken.report, 'function', 'dfn_6425a1b2c3d4e5f60718293a')).toMatchObject({ outcome: 'cannot', reason: expect.stringContaining('code: does not compile') });
    expect((await system.store.functions.list()).length).toBe(functions);
  });

  it('names a file it cannot read, and a Terraform expression where a value should be', async () => {
    const { report } = await importExport({
      files: { 'broken.tf': 'resource "segment_source" "x" {', 'ref.tf': 'resource "segment_source" "id-abc" {\n  name = var.name_of_it\n  slug = "${var.slug}"\n}\n', 'notes.txt': 'hello' },
    });
    expect(report.problems).toEqual([
      { file: 'broken.tf', problem: expect.stringContaining('is not HCL Terraform can read') },
      { file: 'notes.txt', problem: expect.stringContaining('is neither a Terraform (.tf) nor a Public API (.json) file') },
      { file: 'ref.tf', problem: expect.stringContaining('is a Terraform expression') },
    ]);
  });

  it('reads Public API JSON too', async () => {
    const answer = { data: { sources: [{ id: 'pubApiSrc1', slug: 'api_source', name: 'API source', enabled: true, writeKeys: ['PublicApiWriteKey0123456789abcd'], labels: [], settings: {} }] } };
    const { report } = await importExport({ files: { 'sources.json': JSON.stringify(answer) } });
    expect(report.objects).toEqual([{ kind: 'source', segmentId: 'pubApiSrc1', name: 'API source', outcome: 'unchanged' }]);
  });
});

describe('npm run import -- segment <path>', () => {
  it('prints the report with counts by kind, and --json the same report as JSON', async () => {
    const env = { ...process.env, SWITCHYARD_URL: await listening(), ADMIN_TOKEN };
    const run = (args: string[]) => promisify(execFile)(process.execPath, [...nodeArgsFor('src/import-cli.ts'), ...args], { cwd: ROOT, env, maxBuffer: 10 * 1024 * 1024 });
    const text = (await run(['segment', FIXTURE, '--secrets', SECRETS])).stdout;
    expect(text).toContain('Segment import (dry run: nothing written; --apply to create)');
    expect(text).toContain('destination      65a0f1e2d3c4b5a697887766  "Braze (Actions)": cannot move');
    expect(text).toMatch(/warehouse\s+0 \/ 0 \/ 3/);
    expect(text).toContain('What cannot move, and what to use instead: docs/migrating-from-segment.md');
    const json = JSON.parse((await run(['segment', FIXTURE, '--secrets', SECRETS, '--json'])).stdout) as Report;
    expect(json.counts).toEqual(EXPECTED_COUNTS);
    // --apply, after the imports above: everything is found by its Segment id, nothing made again.
    const applied = JSON.parse((await run(['segment', FIXTURE, '--secrets', SECRETS, '--json', '--apply'])).stdout) as Report;
    expect(applied).toMatchObject({ applied: true, counts: EXPECTED_COUNTS });
    const outcomes = applied.objects.filter((o) => o.applied).map((o) => o.applied);
    expect(outcomes).toHaveLength(13);
    expect(outcomes.filter((o) => o !== 'kept' && o !== 'updated')).toEqual([]);
    await expect(run(['segment'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('usage: npm run import -- segment <path to the export>') });
  }, 120_000);
});

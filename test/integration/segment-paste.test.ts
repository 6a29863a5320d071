import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { openStore, type Store } from '../../src/store';
import { auth, buildAdminApp } from '../helpers/admin-app';

/**
 * A team moving off Segment pastes its exports unchanged — destination filters as the
 * Public API returns them (DestinationFilterV1), Webhooks (Actions) subscriptions as the Public API
 * and the Terraform provider write them — and they behave as on Segment; what Switchyard cannot
 * honour is a 400 naming the field. Drafts preview without being saved; errors name the fix.
 * The admin API on a real SQLite store (the routes decide; the store only keeps).
 */

const fixtures = path.join(__dirname, '..', 'fixtures', 'segment-exports');
const filterExports = JSON.parse(readFileSync(path.join(fixtures, 'destination-filters.json'), 'utf8')) as {
  cases: { export: Record<string, unknown> & { title: string }; messages: { message: Record<string, unknown>; delivered: boolean; body?: unknown }[]; sampledShare?: { type: string; messages: number; kept: [number, number] } }[];
};
const subscriptions = JSON.parse(readFileSync(path.join(fixtures, 'webhooks-subscriptions.json'), 'utf8')) as {
  publicApi: Record<string, unknown>[];
  terraform: Record<string, unknown>[];
  event: Record<string, unknown>;
  rendered: Record<string, unknown>;
};

let dir: string;
let store: Store;
let app: FastifyInstance;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-segment-paste-'));
  store = await openStore({ databasePath: path.join(dir, 'switchyard.db') });
  app = await buildAdminApp(store, { strictJson: true });
});
afterAll(async () => {
  await app?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => app.inject({ method, url: `/admin${url}`, headers: auth, ...(payload === undefined ? {} : { payload: payload as object }) });

async function webhooksDestination(name: string) {
  const { source } = await store.sources.create(`paste ${name}`);
  const destination = await store.destinations.create(source.id, { name, enabled: true, webhooks: [{ url: 'https://hooks.example.com/a', headers: {} }] });
  return { source, destination };
}

const mapping = (name: string, data: Record<string, unknown>, trigger = 'all') => ({ name, enabled: true, trigger, settings: { url: 'https://hooks.example.com/m', method: 'POST', data } });

async function actionsDestination(name: string, mappings: unknown[]) {
  const { source } = await store.sources.create(`paste ${name}`);
  const created = await call('POST', `/sources/${source.id}/destinations`, { type: 'actions', name, enabled: true, mappings });
  expect(created.statusCode).toBe(201);
  return { source, destination: created.json<{ id: string; mappings: { name: string }[] }>() };
}

describe("destination filters exported from Segment's Public API", () => {
  it.each(filterExports.cases.map((c) => [c.export.title, c] as const))('pastes "%s" unchanged and decides as Segment does', async (_title, { export: exported, messages, sampledShare }) => {
    const { destination } = await webhooksDestination(`filters ${exported.title}`);
    const created = await call('POST', `/destinations/${destination.id}/filters`, exported);
    expect(created.statusCode).toBe(201);
    const filter = created.json<Record<string, unknown>>();
    // Segment's ids and dates are not kept: the filter is Switchyard's own.
    expect(filter).toMatchObject({ title: exported.title, if: exported.if, actions: exported.actions, enabled: exported.enabled, destinationId: destination.id, id: expect.stringMatching(/^flt_/) });
    expect(filter.createdAt).not.toBe(exported.createdAt);

    for (const { message, delivered, body } of messages) {
      const preview = (await call('POST', `/destinations/${destination.id}/filters/preview`, { event: message })).json<{ delivered: boolean; body: unknown; filter: unknown }>();
      expect(preview.delivered).toBe(delivered);
      if (delivered) expect(preview).toMatchObject({ body, filter: null });
      else expect(preview.filter).toEqual({ id: filter.id, title: exported.title, reason: 'filters' });
    }
    if (sampledShare) {
      let kept = 0;
      for (let n = 0; n < sampledShare.messages; n++) {
        const preview = (await call('POST', `/destinations/${destination.id}/filters/preview`, { event: { type: sampledShare.type, messageId: `sample-${n}`, userId: `u${n}` } })).json<{ delivered: boolean; filter: { reason: string } | null }>();
        if (preview.delivered) kept++;
        else expect(preview.filter?.reason).toBe('sampled');
      }
      expect(kept / sampledShare.messages).toBeGreaterThanOrEqual(sampledShare.kept[0]);
      expect(kept / sampledShare.messages).toBeLessThanOrEqual(sampledShare.kept[1]);
    }
  });

  it('takes back its own GET unchanged, on POST and PATCH', async () => {
    const { destination } = await webhooksDestination('own GET');
    const created = (await call('POST', `/destinations/${destination.id}/filters`, filterExports.cases[0].export)).json<Record<string, unknown>>();
    const again = await call('POST', `/destinations/${destination.id}/filters`, { ...created, title: 'Copy' });
    expect(again.statusCode).toBe(201);
    const patched = await call('PATCH', `/destinations/${destination.id}/filters/${String(created.id)}`, { ...created, enabled: false });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ id: created.id, enabled: false });
  });

  it('refuses a destinationId or sourceId naming another of Switchyard\'s destinations or sources, and an id naming another filter', async () => {
    const { destination } = await webhooksDestination('ids mine');
    const { source: other, destination: otherDestination } = await webhooksDestination('ids other');
    const exported = filterExports.cases[0].export;
    const wrongDestination = await call('POST', `/destinations/${destination.id}/filters`, { ...exported, destinationId: otherDestination.id });
    expect(wrongDestination.statusCode).toBe(400);
    expect(wrongDestination.json<{ message: string }>().message).toBe(`destinationId: names destination ${otherDestination.id}, not this one (${destination.id}); leave it out, or give Segment's own id (it is ignored)`);
    const wrongSource = await call('POST', `/destinations/${destination.id}/filters`, { ...exported, sourceId: other.id });
    expect(wrongSource.statusCode).toBe(400);
    expect(wrongSource.json<{ message: string }>().message).toMatch(/^sourceId: names source src_/);
    const draft = await call('POST', `/destinations/${destination.id}/filters/preview`, { event: { type: 'track' }, filter: { ...exported, destinationId: otherDestination.id } });
    expect(draft.statusCode).toBe(400);
    expect(draft.json<{ message: string }>().message).toMatch(/^filter\.destinationId: names destination/);
    const saved = (await call('POST', `/destinations/${destination.id}/filters`, exported)).json<{ id: string }>();
    const wrongId = await call('PATCH', `/destinations/${destination.id}/filters/${saved.id}`, { id: 'flt_00000000000000000000000000000000', enabled: false });
    expect(wrongId.statusCode).toBe(400);
    expect(wrongId.json<{ message: string }>().message).toBe(`id: names filter flt_00000000000000000000000000000000, not the one in the path (${saved.id})`);
    expect((await store.destinationFilters.list(otherDestination.id)).length).toBe(0);
  });
});

describe('Webhooks (Actions) subscriptions exported from Segment', () => {
  it("creates a destination from the Public API's subscriptions unchanged, and renders them as Segment would", async () => {
    const { destination } = await actionsDestination('public api', subscriptions.publicApi);
    expect(destination.mappings.map((m) => m.name)).toEqual(subscriptions.publicApi.map((s) => s.name));
    const preview = (await call('POST', `/destinations/${destination.id}/mappings/preview`, { event: subscriptions.event })).json<{ mappings: { name: string; matched: boolean; request?: { body: unknown } }[] }>();
    const orders = preview.mappings.find((m) => m.name === 'Order Completed to fulfilment')!;
    expect(orders).toMatchObject({ matched: true, request: { body: subscriptions.rendered['Order Completed to fulfilment'] } });
    expect(preview.mappings.find((m) => m.name === 'Identify to CRM')).toMatchObject({ matched: false });
  });

  it("creates a destination from Terraform's resources, settings a JSON string", async () => {
    const { destination } = await actionsDestination('terraform', subscriptions.terraform);
    const preview = (await call('POST', `/destinations/${destination.id}/mappings/preview`, { event: subscriptions.event })).json<{ mappings: { name: string; enabled: boolean; matched: boolean; request?: { body: unknown } }[] }>();
    expect(preview.mappings[0]).toMatchObject({ name: 'Webhook send subscription', matched: true, request: { body: subscriptions.rendered['Webhook send subscription'] } });
    expect(preview.mappings[1]).toMatchObject({ name: 'Send', enabled: false, matched: true });
    // What is shown is Switchyard's mapping: Segment's ids and batch settings are not kept.
    const shown = (await call('GET', `/destinations/${destination.id}`)).json<{ mappings: Record<string, unknown>[] }>();
    expect(Object.keys(shown.mappings[0]).sort()).toEqual(['enabled', 'name', 'settings', 'trigger']);
    expect(Object.keys(shown.mappings[0].settings as object).sort()).toEqual(['data', 'headers', 'method', 'url']);
  });

  it('refuses enable_batching: true, naming it', async () => {
    const { source } = await store.sources.create('paste batching');
    const batching = { ...subscriptions.publicApi[0], settings: { ...(subscriptions.publicApi[0].settings as object), enable_batching: true } };
    const refused = await call('POST', `/sources/${source.id}/destinations`, { type: 'actions', enabled: true, mappings: [batching] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json<{ message: string }>().message).toBe('mappings[0].settings.enable_batching: batching is not supported yet: every matched event is sent as its own request; set it to false or leave it out');
    const asTerraform = await call('POST', `/sources/${source.id}/destinations`, { type: 'actions', enabled: true, mappings: [{ ...subscriptions.terraform[0], settings: JSON.stringify({ ...JSON.parse(subscriptions.terraform[0].settings as string), enable_batching: true }) }] });
    expect(asTerraform.json<{ message: string }>().message).toMatch(/^mappings\[0\]\.settings\.enable_batching: batching is not supported yet/);
  });

  it("refuses a destinationId naming another of Switchyard's destinations", async () => {
    const { destination } = await actionsDestination('dst mine', [mapping('A', { a: { '@path': '$.event' } })]);
    const { destination: other } = await webhooksDestination('dst other');
    const patched = await call('PATCH', `/destinations/${destination.id}`, { mappings: [{ ...mapping('A', {}), destinationId: other.id }] });
    expect(patched.statusCode).toBe(400);
    expect(patched.json<{ message: string }>().message).toBe(`mappings[0].destinationId: names destination ${other.id}, not this one (${destination.id}); leave it out, or give Segment's own id (it is ignored)`);
    expect((await call('PATCH', `/destinations/${destination.id}`, { mappings: [{ ...mapping('A', {}), destinationId: destination.id }] })).statusCode).toBe(200);
  });

  it('refuses Terraform settings that are not JSON of an object, or nest deeper than a body may, naming the field', async () => {
    const { source } = await store.sources.create('paste bad settings');
    const post = (settings: string) => call('POST', `/sources/${source.id}/destinations`, { type: 'actions', enabled: true, mappings: [{ name: 'T', enabled: true, trigger: 'all', settings }] });
    expect((await post('{"url":')).json<{ message: string }>().message).toMatch(/^mappings\[0\]\.settings: is a string that is not the JSON of the settings object/);
    expect((await post('[1]')).json<{ message: string }>().message).toBe('mappings[0].settings: is a JSON string that does not hold an object');
    expect((await post(`${'{"a":'.repeat(70)}1${'}'.repeat(70)}`)).json<{ message: string }>().message).toMatch(/^mappings\[0\]\.settings: is a JSON string nesting objects and arrays deeper than 64/);
    const proto = await post('{"url":"https://hooks.example.com/x","method":"POST","__proto__":{"polluted":true}}');
    expect(proto.statusCode).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The string's settings go through the same schema as an object's: an unknown key is named.
    expect((await post('{"url":"https://hooks.example.com/x","method":"POST","colour":"red"}')).json<{ message: string }>().message).toBe('mappings[0].settings.colour: is not a known field');
  });
});

describe('nothing that cannot render goes live', () => {
  it('refuses "@if": {"exist": …} at save with a 400 naming mapping, field, directive and the kit\'s message', async () => {
    const { source } = await store.sources.create('paste exist');
    const refused = await call('POST', `/sources/${source.id}/destinations`, {
      type: 'actions',
      enabled: true,
      mappings: [mapping('Upsert contact', { plan: { '@if': { exist: { '@path': '$.traits.plan' }, then: { '@path': '$.traits.plan' }, else: 'free' } } }, 'type = "identify"')],
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json<{ message: string }>().message).toBe(
      'mappings[0].settings.data: mapping "Upsert contact": /plan: @if cannot render the synthetic identify message (a type its trigger can match): @if requires an "exists" key or a "blank" key',
    );
    expect(await store.destinations.listBySource(source.id)).toEqual([]);
  });

  it('refuses it on PATCH and keeps the saved mappings', async () => {
    const { destination } = await actionsDestination('exist patch', [mapping('Good', { a: { '@path': '$.event' } })]);
    const refused = await call('PATCH', `/destinations/${destination.id}`, { mappings: [mapping('Good', { a: { '@if': { exist: { '@path': '$.event' }, then: 1 } } })] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json<{ message: string }>().message).toMatch(/^mappings\[0\]\.settings\.data: mapping "Good": \/a: @if cannot render/);
    expect((await store.destinations.get(destination.id))?.mappings[0].settings.data).toEqual({ a: { '@path': '$.event' } });
  });
});

describe('draft mappings preview', () => {
  it('renders the draft given as mappings, saves nothing and leaves the saved mappings as they were', async () => {
    const { destination } = await actionsDestination('draft', [mapping('Saved', { saved: { '@path': '$.event' } })]);
    const before = await store.destinations.get(destination.id);
    const draft = await call('POST', `/destinations/${destination.id}/mappings/preview`, { event: { type: 'track', event: 'Viewed' }, mappings: [mapping('Draft', { draft: { '@template': 'saw {{event}}' } }, 'type = "track"')] });
    expect(draft.statusCode).toBe(200);
    expect(draft.json()).toEqual({ mappings: [{ name: 'Draft', enabled: true, matched: true, request: { method: 'POST', url: 'https://hooks.example.com/m', headers: { 'content-type': 'application/json', 'user-agent': 'Switchyard/1.0' }, body: { draft: 'saw Viewed' } } }] });
    expect(await store.destinations.get(destination.id)).toEqual(before);
    const saved = (await call('POST', `/destinations/${destination.id}/mappings/preview`, { event: { type: 'track', event: 'Viewed' } })).json<{ mappings: { name: string }[] }>();
    expect(saved.mappings.map((m) => m.name)).toEqual(['Saved']);
  });

  it('keeps a saved header value behind the mask: a draft sending ******** previews it masked, and no answer holds it', async () => {
    const secret = 'draft-preview-header-secret';
    const { destination } = await actionsDestination('draft secret', [{ ...mapping('Saved', { a: { '@path': '$.event' } }), settings: { url: 'https://hooks.example.com/m', method: 'POST', headers: { 'X-Key': secret } } }]);
    const draft = await call('POST', `/destinations/${destination.id}/mappings/preview`, {
      event: { type: 'track', event: 'Viewed' },
      mappings: [{ ...mapping('Saved', { header: { '@path': '$.headers' }, all: { '@path': '$.' } }), settings: { url: 'https://hooks.example.com/m', method: 'POST', headers: { 'X-Key': '********' }, data: { all: { '@path': '$.' } } } }],
    });
    expect(draft.statusCode).toBe(200);
    expect(draft.json<{ mappings: { request: { headers: Record<string, string> } }[] }>().mappings[0].request.headers['x-key']).toBe('********');
    expect(draft.body).not.toContain(secret);
    // Moved to another URL, the mask no longer stands for the saved value: a 400 naming the header, as on PATCH.
    const moved = await call('POST', `/destinations/${destination.id}/mappings/preview`, { event: { type: 'track' }, mappings: [{ ...mapping('Saved', {}), settings: { url: 'https://elsewhere.example.com/m', method: 'POST', headers: { 'X-Key': '********' } } }] });
    expect(moved.statusCode).toBe(400);
    expect(moved.json<{ message: string }>().message).toMatch(/^mappings\[0\]\.settings\.headers\.X-Key: /);
    expect(moved.body).not.toContain(secret);
  });

  it('checks a draft as a save would, naming the draft\'s mapping', async () => {
    const { destination } = await actionsDestination('draft refused', [mapping('Saved', {})]);
    const refused = await call('POST', `/destinations/${destination.id}/mappings/preview`, { event: { type: 'identify' }, mappings: [mapping('Typo', { plan: { '@if': { exist: { '@path': '$.traits.plan' }, then: 1 } } })] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json<{ message: string }>().message).toMatch(/^mappings\[0\]\.settings\.data: mapping "Typo": \/plan: @if cannot render/);
  });
});

describe('errors that teach', () => {
  it.each([
    ['event = "a" && properties.x = 1', 'if: at column 13: "&&" cannot appear here: FQL writes it "and", e.g. event = "A" and type = "track"'],
    ['event = "a" || event = "b"', 'if: at column 13: "||" cannot appear here: FQL writes it "or", e.g. event = "A" or event = "B"'],
    ['event == "a"', 'if: at column 7: "==" cannot appear here: FQL writes it "=", e.g. event = "A"'],
    ['event !== "a"', 'if: at column 7: "!==" cannot appear here: FQL writes it "!=", e.g. event != "A"'],
  ])('an FQL condition %s names the FQL spelling', async (condition, message) => {
    const { destination } = await webhooksDestination(`fql ${condition}`);
    const refused = await call('POST', `/destinations/${destination.id}/filters`, { title: 'T', enabled: true, if: condition, actions: [{ type: 'DROP' }] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ code: 'invalid_request', message });
  });

  it('an unknown field names the nearest known one, and only when one is near', async () => {
    const { source } = await store.sources.create('paste consent');
    const post = (body: Record<string, unknown>) => call('POST', `/sources/${source.id}/destinations`, { enabled: true, webhooks: [{ url: 'https://hooks.example.com/a' }], ...body });
    expect((await post({ consent: { category: ['ads'] } })).json()).toEqual({ code: 'invalid_request', message: 'consent.category: is not a known field; did you mean categories?' });
    expect((await post({ sharedsecret: 'x' })).json<{ message: string }>().message).toBe('sharedsecret: is not a known field; did you mean sharedSecret?');
    expect((await post({ colour: 'red' })).json<{ message: string }>().message).toBe('colour: is not a known field');
  });
});

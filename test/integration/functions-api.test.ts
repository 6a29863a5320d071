import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createFunctionSandbox } from '../../src/functions/function-sandbox';
import type { SandboxPool } from '../../src/functions/sandbox-pool';
import { openStore, type Store } from '../../src/store';
import { auth, buildAdminApp } from '../helpers/admin-app';
import { createTestDatabase } from '../helpers/postgres';
import { startReceiver, type Receiver } from '../helpers/receiver';

/**
 * Functions in Segment's Public API shape, saved in a real store on both dialects: ids prefixed as
 * Segment's, the Terraform body, versions and deploys, the check at save, and a test run that runs
 * the latest version for real in the sandbox (its fetch reaching a receiver on 127.0.0.1) with
 * sensitive settings masked.
 */

const dialects: [string, () => Promise<{ store: Store; cleanUp: () => void }>][] = [
  [
    'SQLite',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-functions-'));
      return { store: await openStore({ databasePath: path.join(dir, 'switchyard.db') }), cleanUp: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
  ['PostgreSQL', async () => ({ store: await openStore({ databasePath: '', databaseUrl: await createTestDatabase('switchyard_functions') }), cleanUp: () => undefined })],
];

const DESTINATION_CODE = `
async function onTrack(event, settings) {
  console.log('sending', event.event, 'with', settings.apiKey);
  const response = await fetch(settings.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + settings.apiKey },
    body: JSON.stringify({ name: event.event, total: _.get(event, 'properties.total'), extra: event.unknownRootField }),
  });
  if (response.status >= 500) throw new RetryError('receiver failed: ' + response.status);
  return { status: response.status };
}
async function onIdentify(event) { throw new InvalidEventPayload('no traits for ' + event.userId); }
`;

const settingDefinitions = [
  { name: 'url', label: 'URL', description: 'Where to send', type: 'STRING', required: true, sensitive: false },
  { name: 'apiKey', label: 'API key', description: 'Secret', type: 'STRING', required: true, sensitive: true },
];

describe.each(dialects)('functions API on %s', (_name, open) => {
  let store: Store;
  let cleanUp: () => void;
  let app: FastifyInstance;
  let sandbox: SandboxPool;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ store, cleanUp } = await open());
    sandbox = createFunctionSandbox({ functionThreads: 1, functionTimeout: 5000, functionMemoryLimit: 32, egressAllowlist: ['127.0.0.0/8'] });
    app = await buildAdminApp(store, { functionSandbox: sandbox });
    receiver = await startReceiver();
  });

  afterAll(async () => {
    await app.close();
    await sandbox.close();
    await receiver.close();
    await store.close();
    cleanUp();
  });

  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => {
    const response = await app.inject({ method, url, headers: auth, ...(payload !== undefined && { payload: payload as object }) });
    return { status: response.statusCode, json: response.body ? response.json() : undefined };
  };
  const create = (body: Record<string, unknown>) => call('POST', '/admin/functions', body);

  it('creates each kind with the id prefix Segment gives it, and refuses INSERT_SOURCE', async () => {
    const cases: [string, string, RegExp][] = [
      ['DESTINATION', DESTINATION_CODE, /^dfn_[0-9a-f]{24}$/],
      ['INSERT_DESTINATION', 'function onTrack(event) { return event; }', /^ifnd_[0-9a-f]{24}$/],
      ['SOURCE', 'async function onRequest(request) { Segment.track({ event: "x", userId: "u" }); }', /^sfnc_[0-9a-f]{22}$/],
    ];
    for (const [resourceType, code, pattern] of cases) {
      const created = await create({ resourceType, code, displayName: `${resourceType} fn`, settings: settingDefinitions });
      expect(created.status).toBe(201);
      expect(created.json.id).toMatch(pattern);
      expect(created.json).toMatchObject({ resourceType, code, displayName: `${resourceType} fn`, settings: settingDefinitions, latestVersion: 1, deployedVersion: 1, isLatestVersion: true });
    }
    const insertSource = await create({ resourceType: 'INSERT_SOURCE', code: 'function onTrack(e) { return e; }', displayName: 'x' });
    expect(insertSource.status).toBe(400);
    expect(insertSource.json.message).toMatch(/^resourceType: INSERT_SOURCE .*not supported/);
    expect((await create({ resourceType: 'WAREHOUSE', code: 'function onTrack() {}', displayName: 'x' })).json.message).toMatch(/^resourceType: "WAREHOUSE" is not one of/);
  });

  it('checks the code at save: a parse error names line and column, a missing handler names those expected, onBatch alone is refused', async () => {
    const parseError = await create({ resourceType: 'DESTINATION', code: 'async function onTrack(event) {\n  const x = ;\n}', displayName: 'bad' });
    expect(parseError.status).toBe(400);
    expect(parseError.json.message).toMatch(/^code: does not compile at line 2, column 13: SyntaxError/);
    const noHandler = await create({ resourceType: 'DESTINATION', code: 'function send(event) {}', displayName: 'bad' });
    expect(noHandler.json.message).toBe('code: defines no handler; a DESTINATION function must define one or more of onTrack, onIdentify, onPage, onScreen, onGroup, onAlias, onDelete at the top level');
    const source = await create({ resourceType: 'SOURCE', code: 'function onTrack() {}', displayName: 'bad' });
    expect(source.json.message).toMatch(/^code: defines no handler; a SOURCE function must define onRequest/);
    const batchOnly = await create({ resourceType: 'INSERT_DESTINATION', code: 'async function onBatch(events) { return events; }', displayName: 'bad' });
    expect(batchOnly.status).toBe(400);
    expect(batchOnly.json.message).toMatch(/^code: defines only onBatch, which Switchyard never calls: each message is delivered by its own workflow/);
    const duplicate = await create({ resourceType: 'DESTINATION', code: DESTINATION_CODE, displayName: 'x', settings: [settingDefinitions[0], settingDefinitions[0]] });
    expect(duplicate.json.message).toBe('settings[1].name: "url" is defined twice');
  });

  it('accepts a Terraform segment_function body, and what GET answers saves back unchanged', async () => {
    const terraform = { display_name: null, resource_type: 'DESTINATION', code: DESTINATION_CODE, logo_url: 'https://example.com/logo.png', description: 'From Git Sync', settings: settingDefinitions };
    const created = await create(terraform);
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ resourceType: 'DESTINATION', logoUrl: 'https://example.com/logo.png', description: 'From Git Sync', displayName: 'Destination function' });
    const read = await call('GET', `/admin/functions/${created.json.id}`);
    const saved = await call('PATCH', `/admin/functions/${created.json.id}`, read.json);
    expect(saved.status).toBe(200);
    expect(saved.json).toEqual(expect.objectContaining({ ...read.json, updatedAt: expect.any(String) }));
    expect(saved.json.latestVersion).toBe(1);
    const both = await create({ ...terraform, resourceType: 'DESTINATION' });
    expect(both.json.message).toBe("resource_type: give either resource_type (Terraform's name) or resourceType, not both");
  });

  it('lists without code or settings, filters by resourceType, and deletes', async () => {
    const created = await create({ resourceType: 'INSERT_DESTINATION', code: 'function onTrack(e) { return e; }', displayName: 'listed' });
    const listed = await call('GET', '/admin/functions?resourceType=INSERT_DESTINATION');
    const item = listed.json.functions.find((f: { id: string }) => f.id === created.json.id);
    expect(item).toMatchObject({ displayName: 'listed' });
    expect(item).not.toHaveProperty('code');
    expect(item).not.toHaveProperty('settings');
    expect(listed.json.functions.every((f: { resourceType: string }) => f.resourceType === 'INSERT_DESTINATION')).toBe(true);
    expect((await call('GET', '/admin/functions?resourceType=INSERT_SOURCE')).status).toBe(400);
    expect((await call('DELETE', `/admin/functions/${created.json.id}`)).status).toBe(204);
    expect((await call('GET', `/admin/functions/${created.json.id}`)).status).toBe(404);
    expect((await call('GET', `/admin/functions/${created.json.id}/versions`)).status).toBe(404);
  });

  it('makes every save of new code a version, and deploys the latest or a named one', async () => {
    const created = await create({ resourceType: 'DESTINATION', code: 'function onTrack() { return 1; }', displayName: 'versioned' });
    const id = created.json.id as string;
    await call('PATCH', `/admin/functions/${id}`, { code: 'function onTrack() { return 2; }' });
    const third = await call('PATCH', `/admin/functions/${id}`, { code: 'function onTrack() { return 3; }' });
    expect(third.json).toMatchObject({ latestVersion: 3, deployedVersion: 1, isLatestVersion: false });
    // The same code saved again is no new version; a name change is none either.
    expect((await call('PATCH', `/admin/functions/${id}`, { code: 'function onTrack() { return 3; }', displayName: 'renamed' })).json).toMatchObject({ latestVersion: 3, displayName: 'renamed' });
    const versions = await call('GET', `/admin/functions/${id}/versions`);
    expect(versions.json.versions.map((v: { version: number; isDeployed: boolean }) => [v.version, v.isDeployed])).toEqual([
      [3, false],
      [2, false],
      [1, true],
    ]);
    expect(versions.json.versions[1].code).toBe('function onTrack() { return 2; }');
    expect((await call('POST', `/admin/functions/${id}/deploy`, {})).json).toEqual({ functionDeployment: { status: 'SUCCESS' }, deployedVersion: 3 });
    expect((await call('POST', `/admin/functions/${id}/deploy`, { version: 2 })).json).toEqual({ functionDeployment: { status: 'SUCCESS' }, deployedVersion: 2 });
    expect((await call('GET', `/admin/functions/${id}`)).json).toMatchObject({ deployedVersion: 2, latestVersion: 3, isLatestVersion: false });
    const missing = await call('POST', `/admin/functions/${id}/deploy`, { version: 9 });
    expect(missing.status).toBe(400);
    expect(missing.json.message).toBe(`version: function ${id} has no version 9`);
    expect((await call('PATCH', `/admin/functions/${id}`, { code: 'function nothing() {}' })).json.message).toMatch(/^code: defines no handler/);
    expect((await call('PATCH', `/admin/functions/${id}`, { resourceType: 'SOURCE' })).json.message).toBe("resourceType: a function's kind cannot change (it is DESTINATION)");
  });

  it('tests the latest version for real without deploying it: result, logs and traced requests, secrets masked', async () => {
    const created = await create({ resourceType: 'DESTINATION', code: 'function onTrack() { return "old"; }', displayName: 'tested', settings: settingDefinitions });
    const id = created.json.id as string;
    await call('PATCH', `/admin/functions/${id}`, { code: DESTINATION_CODE });
    const before = receiver.requests.length;
    const secret = 'sk_live_abcdef123456';
    const event = { type: 'track', event: 'Order Completed', properties: { total: 30 }, unknownRootField: 'kept' };
    const tested = await call('POST', `/admin/functions/${id}/test`, { event, settings: { url: receiver.url, apiKey: secret } });
    expect(tested.status).toBe(200);
    expect(tested.json).toMatchObject({ status: 'SUCCESS', result: { status: 200 }, logs: ['log: sending Order Completed with ••••••••••3456'], requests: [{ method: 'POST', url: receiver.url, status: 200 }] });
    expect(JSON.stringify(tested.json)).not.toContain(secret);
    const received = receiver.requests.slice(before);
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0].body)).toEqual({ name: 'Order Completed', total: 30, extra: 'kept' });
    expect(received[0].headers.authorization).toBe(`Bearer ${secret}`);
    // Testing deploys nothing.
    expect((await call('GET', `/admin/functions/${id}`)).json).toMatchObject({ deployedVersion: 1, latestVersion: 2 });

    const rejected = await call('POST', `/admin/functions/${id}/test`, { event: { type: 'identify', userId: 'u1' }, settings: { apiKey: secret } });
    expect(rejected.json).toMatchObject({ status: 'ERROR', error: { type: 'InvalidEventPayload', message: 'no traits for u1' }, logs: [], requests: [] });
    const unsupported = await call('POST', `/admin/functions/${id}/test`, { event: { type: 'page' }, settings: {} });
    expect(unsupported.json).toMatchObject({ status: 'ERROR', error: { type: 'EventNotSupported' } });
    const failing = await call('POST', `/admin/functions/${id}/test`, { event: { type: 'track', event: 'x' }, settings: { url: 'http://127.0.0.1:9/', apiKey: secret } });
    expect(failing.json).toMatchObject({ status: 'ERROR', error: { type: 'Error' }, requests: [{ method: 'POST', url: 'http://127.0.0.1:9/', status: null }] });
    expect(JSON.stringify(failing.json)).not.toContain(secret);
    expect((await call('POST', `/admin/functions/${id}/test`, { settings: {} })).json.message).toBe('event: a DESTINATION function is tested with an event');
  });

  it('tests a source function with a request: the calls it emits are the result, nothing is ingested', async () => {
    const code = `async function onRequest(request, settings) {
      const body = request.json();
      Segment.identify({ userId: body.id, traits: { email: body.email, plan: request.url.searchParams.get('plan') } });
      Segment.track({ event: 'Signed Up', userId: body.id, properties: { via: request.headers.get('X-Source') } });
    }`;
    const created = await create({ resourceType: 'SOURCE', code, displayName: 'Webhook source' });
    const tested = await call('POST', `/admin/functions/${created.json.id}/test`, {
      request: { headers: { 'x-source': 'form' }, body: { id: 'u1', email: 'a@example.com' }, url: 'https://hooks.example.com/functions?plan=pro' },
      settings: {},
    });
    expect(tested.json).toMatchObject({
      status: 'SUCCESS',
      result: {
        events: [
          { type: 'identify', message: { userId: 'u1', traits: { email: 'a@example.com', plan: 'pro' } } },
          { type: 'track', message: { event: 'Signed Up', userId: 'u1', properties: { via: 'form' } } },
        ],
      },
    });
    const invalid = await call('POST', `/admin/functions/${created.json.id}/test`, { request: { body: {} }, settings: {} });
    expect(invalid.json).toMatchObject({ status: 'ERROR', error: { type: 'ValidationError', message: 'identify requires userId or anonymousId' } });
  });
});

import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { faultDir, readLog, startOwnApi, stopProcess, type OwnApi } from '../helpers/faults';
import { createTestDatabase } from '../helpers/postgres';
import { postgresStoreDatabase } from '../helpers/postgres-store-database';
import { waitFor } from '../helpers/processes';
import { ADMIN_TOKEN, startSystem, type TestSystem } from '../helpers/system';

/**
 * Scoped tokens and the audit log on PostgreSQL with two API processes: this test's (in-process, `a`) and one it spawns
 * (`b`), sharing one database. Tokens are revoked on every process at once, expire, and never mint
 * more than they hold; every change writes exactly one audit row, denied attempts are recorded, and
 * no secret value reaches a row, a log line or a reply.
 */
let a: TestSystem;
let b: OwnApi;
let database: ReturnType<typeof postgresStoreDatabase>;
/** Every reply body this file has seen: none may hold a secret. */
const replies: string[] = [];

beforeAll(async () => {
  const url = await createTestDatabase('access');
  database = postgresStoreDatabase(url);
  a = await startSystem({ databaseUrl: url });
  const dir = faultDir('access-audit');
  b = await startOwnApi({ ...process.env, DATABASE_URL: url, ADMIN_TOKEN, LOG_FORMAT: 'json' }, path.join(dir, 'api.log'));
}, 180_000);
afterAll(async () => {
  await stopProcess(b?.process);
  await a?.close();
  await database?.close();
});

type Reply = { status: number; json: any; body: string };

async function onA(method: string, url: string, token: string, payload?: unknown): Promise<Reply> {
  const reply = await a.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(payload !== undefined && { payload: payload as object }) });
  replies.push(reply.body);
  return { status: reply.statusCode, json: reply.body ? reply.json() : undefined, body: reply.body };
}

async function onB(method: string, url: string, token: string, payload?: unknown): Promise<Reply> {
  const response = await fetch(`${b.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(payload !== undefined && { 'content-type': 'application/json' }) },
    ...(payload !== undefined && { body: JSON.stringify(payload) }),
  });
  const body = await response.text();
  replies.push(body);
  return { status: response.status, json: body ? JSON.parse(body) : undefined, body };
}

async function mint(scopes: string[], extra: Record<string, unknown> = {}, by = ADMIN_TOKEN): Promise<{ id: string; token: string }> {
  const created = await onA('POST', '/admin/tokens', by, { name: `test ${scopes.join(' ')} ${randomBytes(3).toString('hex')}`, scopes, ...extra });
  expect(created.status).toBe(201);
  return created.json;
}

async function auditRows(query = ''): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await onA('GET', `/admin/audit?limit=50${query}${cursor ? `&cursor=${cursor}` : ''}`, ADMIN_TOKEN);
    expect(page.status).toBe(200);
    rows.push(...page.json.entries);
    cursor = page.json.nextCursor;
  } while (cursor);
  return rows;
}

describe('tokens', () => {
  it('shows a token once, prefixed swy_, and lists tokens without it, with lastUsedAt', async () => {
    const created = await onA('POST', '/admin/tokens', ADMIN_TOKEN, { name: 'ci reader', scopes: ['read'] });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ id: expect.stringMatching(/^tok_/), name: 'ci reader', scopes: ['read'], expiresAt: null, token: expect.stringMatching(/^swy_[A-Za-z0-9_-]{43}$/) });
    expect((await onB('GET', '/admin/sources', created.json.token)).status).toBe(200);
    const listed = await onA('GET', '/admin/tokens', ADMIN_TOKEN);
    expect(listed.body).not.toContain(created.json.token);
    expect(listed.json.tokens).toContainEqual({ id: created.json.id, name: 'ci reader', scopes: ['read'], createdAt: expect.any(String), expiresAt: null, lastUsedAt: expect.any(String), revokedAt: null });
    // Only its hash is stored.
    const raw = database.raw();
    const stored = await sql<{ row: string }>`select row_to_json(t)::text as row from admin_tokens t`.execute(raw);
    expect(stored.rows.map((r) => r.row).join('\n')).not.toContain(created.json.token);
  });

  it('answers 401 on the other API process from the request after a revocation', async () => {
    const { id, token } = await mint(['read']);
    expect((await onB('GET', '/admin/sources', token)).status).toBe(200);
    expect((await onA('DELETE', `/admin/tokens/${id}`, ADMIN_TOKEN)).status).toBe(204);
    const refused = await onB('GET', '/admin/sources', token);
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual({ code: 'unauthorized', message: 'Authorization: the admin token is not valid (unknown or revoked)' });
    expect((await onA('DELETE', `/admin/tokens/${id}`, ADMIN_TOKEN)).status).toBe(404);
  });

  it('answers 401 once a token has expired', async () => {
    const { id, token } = await mint(['read'], { expiresAt: new Date(Date.now() + 1_500).toISOString() });
    expect((await onB('GET', '/admin/sources', token)).status).toBe(200);
    await waitFor(async () => {
      const reply = await onB('GET', '/admin/sources', token);
      if (reply.status !== 401) throw new Error(`still ${reply.status}`);
      expect(reply.json.message).toMatch(new RegExp(`^Authorization: the admin token ${id} expired at `));
    }, 10_000);
    expect((await onA('POST', '/admin/tokens', ADMIN_TOKEN, { name: 'past', scopes: ['read'], expiresAt: '2020-01-01T00:00:00Z' })).json).toEqual({ code: 'invalid_request', message: 'expiresAt: must be in the future' });
  });

  it('never mints a token with a scope the minting token lacks', async () => {
    const admin = await mint(['admin']);
    const beyond = await onA('POST', '/admin/tokens', admin.token, { name: 'escalate', scopes: ['admin', 'payloads:read'] });
    expect(beyond.status).toBe(403);
    expect(beyond.json).toEqual({ code: 'forbidden', message: 'scopes: this token cannot grant scopes it lacks: payloads:read' });
    expect((await onA('POST', '/admin/tokens', admin.token, { name: 'another admin', scopes: ['admin'] })).status).toBe(201);
    expect((await onA('POST', '/admin/tokens', admin.token, { name: 'bad', scopes: ['root'] })).status).toBe(400);
  });
});

describe('the audit log', () => {
  const SHARED_SECRET = `shared-${randomBytes(16).toString('hex')}`;
  const NEW_SHARED_SECRET = `shared2-${randomBytes(16).toString('hex')}`;
  const SIGNING_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
  const HEADER_VALUE = `header-${randomBytes(16).toString('hex')}`;
  const USER_ID = `user-${randomBytes(8).toString('hex')}`;

  it('writes exactly one row per change, naming the fields and never their values', async () => {
    const operator = await mint(['destinations:write', 'operate', 'regulations', 'admin', 'read']);
    const as = operator.token;
    /** Runs one change and returns the one row it added. */
    const change = async (action: string, method: string, url: string, payload?: unknown): Promise<{ reply: Reply; row: any }> => {
      const before = (await auditRows(`&action=${action}`)).length;
      const reply = await onA(method, url, as, payload);
      expect(`${action} ${reply.status < 300 ? "ok" : reply.body}`).toBe(`${action} ok`);
      const rows = await auditRows(`&action=${action}`);
      expect(rows.length).toBe(before + 1);
      expect(rows[0]).toMatchObject({ action, outcome: 'success', actor: { tokenId: operator.id, name: expect.stringMatching(/^test /) }, requestId: expect.any(String), ip: expect.any(String) });
      return { reply, row: rows[0] };
    };

    const source = await change('source.create', 'POST', '/admin/sources', { name: 'audited' });
    const sourceId = source.reply.json.id;
    expect(source.row).toMatchObject({ target: sourceId, changed: ['name'] });

    const destination = await change('destination.create', 'POST', `/admin/sources/${sourceId}/destinations`, {
      enabled: true,
      sharedSecret: SHARED_SECRET,
      signingSecret: SIGNING_SECRET,
      webhooks: [{ url: 'https://hooks.example.com/a', headers: { 'x-api-key': HEADER_VALUE } }],
    });
    const id = destination.reply.json.id;
    expect(destination.row).toMatchObject({ target: id, changed: ['enabled', 'sharedSecret', 'signingSecret', 'webhooks'] });

    expect((await change('destination.update', 'PATCH', `/admin/destinations/${id}`, { sharedSecret: NEW_SHARED_SECRET, paused: true })).row).toMatchObject({ target: id, changed: ['paused', 'sharedSecret'] });
    const filter = await change('filter.create', 'POST', `/admin/destinations/${id}/filters`, { title: 'drop', enabled: true, if: 'all', actions: [{ type: 'DROP' }] });
    await change('filter.update', 'PATCH', `/admin/destinations/${id}/filters/${filter.reply.json.id}`, { enabled: false });
    await change('filter.delete', 'DELETE', `/admin/destinations/${id}/filters/${filter.reply.json.id}`);
    expect((await change('webhook.enable', 'POST', `/admin/destinations/${id}/webhooks/0/enable`)).row).toMatchObject({ target: id, changed: ['webhooks[0].enabled'] });
    await change('webhook.backpressure.clear', 'DELETE', `/admin/destinations/${id}/webhooks/0/backpressure`);
    const regulation = await change('regulation.create', 'POST', '/admin/regulations', { regulationType: 'UNSUPPRESS', subjectType: 'USER_ID', subjectIds: [USER_ID] });
    expect(regulation.row).toMatchObject({ target: regulation.reply.json.id, changed: ['regulationType', 'subjectIds', 'subjectType'] });
    const token = await change('token.create', 'POST', '/admin/tokens', { name: 'short-lived', scopes: ['read'] });
    const tokenSecret: string = token.reply.json.token;
    await change('token.revoke', 'DELETE', `/admin/tokens/${token.reply.json.id}`);
    const audience = await change('audience.create', 'POST', `/admin/sources/${sourceId}/audiences`, { name: 'Pro users', definition: { trait: 'plan', op: 'eq', value: 'pro' }, paused: true });
    await change('audience.update', 'PATCH', `/admin/audiences/${audience.reply.json.id}`, { name: 'pro users' });
    await change('audience.sync', 'POST', `/admin/audiences/${audience.reply.json.id}/sync`);
    await change('audience.delete', 'DELETE', `/admin/audiences/${audience.reply.json.id}`);
    await change('redelivery.start', 'POST', `/admin/sources/${sourceId}/redeliver`, { status: 'failed', since: '2026-01-01T00:00:00Z', until: '2026-01-02T00:00:00Z' });
    await change('destination.delete', 'DELETE', `/admin/destinations/${id}`);
    await change('source.delete', 'DELETE', `/admin/sources/${sourceId}`);

    // A change that found nothing to change writes no row.
    const none = (await auditRows('&action=destination.delete')).length;
    expect((await onA('DELETE', `/admin/destinations/${id}`, as)).status).toBe(404);
    expect((await auditRows('&action=destination.delete')).length).toBe(none);

    const secrets = [SHARED_SECRET, NEW_SHARED_SECRET, SIGNING_SECRET, HEADER_VALUE, USER_ID, tokenSecret, operator.token, ADMIN_TOKEN];
    const stored = (await sql<{ row: string }>`select row_to_json(t)::text as row from audit_log t`.execute(database.raw())).rows.map((r) => r.row).join('\n');
    const logged = readLog(b.logFile);
    for (const secret of secrets) {
      expect(stored).not.toContain(secret);
      expect(logged).not.toContain(secret);
      for (const body of replies.filter((body) => !body.includes('"token":"swy_'))) expect(body).not.toContain(secret);
    }
  });

  it('commits a change and its row together: a row that cannot be written undoes the change', async () => {
    const raw = database.raw();
    // A fault only this test's database has: the row of one source's creation fails to insert.
    await sql`create function refuse_marked_row() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`.execute(raw);
    await sql`create trigger refuse_marked_row before insert on audit_log for each row when (new.action = 'source.create' and new.actor_name = 'ADMIN_TOKEN' and new.ip = '203.0.113.99') execute function refuse_marked_row()`.execute(raw);
    try {
      const reply = await a.app.inject({ method: 'POST', url: '/admin/sources', remoteAddress: '203.0.113.99', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'never-kept' } });
      expect(reply.statusCode).toBe(500);
      expect((await onA('GET', '/admin/sources', ADMIN_TOKEN)).json.sources.map((source: { name: string }) => source.name)).not.toContain('never-kept');
    } finally {
      await sql`drop trigger refuse_marked_row on audit_log`.execute(raw);
    }
  });

  it('records denied attempts, with the actor when the token is known', async () => {
    const reader = await mint(['read']);
    const forbidden = await onA('PATCH', '/admin/destinations/dst_00000000000000000000000000000001', reader.token, { paused: true });
    expect(forbidden.status).toBe(403);
    const unknown = await onA('DELETE', '/admin/sources/src_00000000000000000000000000000002', 'swy_not-a-real-token');
    expect(unknown.status).toBe(401);
    expect((await auditRows(`&actor=${reader.id}&action=destination.update`))[0]).toMatchObject({
      outcome: 'denied',
      target: 'dst_00000000000000000000000000000001',
      actor: { tokenId: reader.id },
      changed: [],
    });
    expect((await auditRows('&target=src_00000000000000000000000000000002'))[0]).toMatchObject({ action: 'source.delete', outcome: 'denied', actor: { tokenId: null, name: null } });
    // Reads are recorded when refused, under their method and route.
    expect((await onA('GET', '/admin/audit', reader.token)).status).toBe(403);
    expect((await auditRows(`&actor=${reader.id}&action=${encodeURIComponent('GET /admin/audit')}`))).toHaveLength(1);
  });

  it('pages newest first with a cursor, filters by time, and refuses a made-up cursor', async () => {
    const all = await auditRows();
    expect(all.length).toBeGreaterThan(4);
    const first = await onA('GET', '/admin/audit?limit=2', ADMIN_TOKEN);
    const second = await onA('GET', `/admin/audit?limit=2&cursor=${first.json.nextCursor}`, ADMIN_TOKEN);
    expect([...first.json.entries, ...second.json.entries].map((row: any) => row.id)).toEqual(all.slice(0, 4).map((row) => row.id));
    expect(all.map((row) => row.at)).toEqual([...all.map((row) => row.at)].sort().reverse());
    expect(await auditRows(`&since=${encodeURIComponent(all[0].at)}`)).toContainEqual(all[0]);
    expect(await auditRows(`&until=${encodeURIComponent(all[all.length - 1].at)}`)).toEqual([]);
    expect((await onA('GET', '/admin/audit?cursor=bm9wZQ', ADMIN_TOKEN)).json).toEqual({ code: 'invalid_request', message: 'cursor: is not a nextCursor this API returned' });
  });

  it('writes a JSON log line per row, and the database refuses to change or delete a row', async () => {
    const made = await onB('POST', '/admin/sources', ADMIN_TOKEN, { name: 'logged' });
    expect(made.status).toBe(201);
    await waitFor(() => {
      const line = readLog(b.logFile).split('\n').find((l) => l.includes('"audit"') && l.includes(made.json.id));
      if (!line) throw new Error('no audit line yet');
      expect(JSON.parse(line)).toMatchObject({ msg: 'audit', audit: { action: 'source.create', target: made.json.id, actor: { tokenId: null, name: 'ADMIN_TOKEN' }, outcome: 'success', changed: ['name'] } });
    }, 5_000);
    const raw = database.raw();
    await expect(sql`update audit_log set outcome = 'denied'`.execute(raw)).rejects.toThrow(/append-only/);
    await expect(sql`delete from audit_log`.execute(raw)).rejects.toThrow(/append-only/);
  });
});

import { randomBytes } from 'node:crypto';
import { parseKeyring } from '../../src/privacy/keyring';
import type { ActionsMapping } from '../../src/mappings/types';
import { postgresStoreDatabase } from '../helpers/postgres-store-database';
import { createTestDatabase } from '../helpers/postgres';
import { sqliteStoreFile } from '../helpers/sqlite-store-file';

/**
 * Actions destinations in the store (migration 0020_actions_destinations), on a SQLite file and a real
 * PostgreSQL database: an actions destination's mappings, outbound auth and client certificate are
 * kept, their secrets sealed under the payload keyring like every other receiver credential.
 */

const k1 = `k1=${Buffer.alloc(32, 11).toString('base64')}`;
const k2 = `k2=${Buffer.alloc(32, 22).toString('base64')}`;
const ONLY_K1 = parseKeyring(k1);
const K2_ACTIVE = parseKeyring(`${k1},${k2}`, 'k2', 'k1');
const mark = (what: string) => `${what}-${randomBytes(12).toString('hex')}`;

describe.each([
  ['sqlite', async () => sqliteStoreFile('actions')],
  ['postgres', async () => postgresStoreDatabase(await createTestDatabase('switchyard_actions'))],
] as const)('actions destinations in the store on %s', (_name, makeDatabase) => {
  let database: Awaited<ReturnType<typeof makeDatabase>>;
  beforeAll(async () => {
    database = await makeDatabase();
  });
  afterAll(async () => database?.close());

  it('keeps type, mappings, auth and tls, secrets sealed at rest, and lists the enabled mappings for the planner', async () => {
    const [headerSecret, clientSecret, privateKey] = [mark('mapping-header'), mark('client-secret'), `-----BEGIN PRIVATE KEY-----\n${mark('key')}\n-----END PRIVATE KEY-----`];
    const mappings: ActionsMapping[] = [
      { name: 'A', enabled: true, trigger: 'event = "X"', settings: { url: 'https://example.com/a', method: 'PUT', headers: { 'X-Key': headerSecret }, data: { e: { '@path': '$.event' } } } },
      { name: 'B', enabled: false, trigger: 'all', settings: { url: 'https://example.com/b', method: 'POST', headers: {}, data: { '@path': '$.' } } },
    ];
    const auth = { type: 'oauth2' as const, tokenUrl: 'https://auth.example.com/token', clientId: 'cid', clientSecret };
    const tls = { certificate: '-----BEGIN CERTIFICATE-----\nAA\n-----END CERTIFICATE-----', privateKey };
    const store = await database.open(ONLY_K1);
    const { source } = await store.sources.create('actions');
    const created = await store.destinations.create(source.id, { enabled: true, type: 'actions', webhooks: [], mappings, auth, tls });
    expect(created).toMatchObject({ type: 'actions', mappings, auth, tls });

    const row = await database.raw().selectFrom('destinations').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.type).toBe('actions');
    for (const secret of [headerSecret, clientSecret, privateKey]) expect(JSON.stringify(row)).not.toContain(secret);
    expect(row.mappings).toContain('event = \\"X\\"'); // names, triggers and data stay readable

    expect(await store.destinations.listEnabled(source.id)).toEqual([expect.objectContaining({ id: created.id, mappings: [{ name: 'A', trigger: 'event = "X"' }] })]);
    expect(await store.destinations.listSourceIdsWithEnabled()).toContain(source.id);

    // A seed destination is `webhooks`, with none of them.
    const seed = await store.destinations.create(source.id, { enabled: true, webhooks: [{ url: 'https://example.com/w', headers: {} }] });
    expect(seed).toMatchObject({ type: 'webhooks', mappings: [], auth: null, tls: null });

    // After a master-key rotation they are sealed again under the new key and still read back.
    const rotated = await database.open(K2_ACTIVE);
    while ((await rotated.destinations.resealCredentials(100)).left);
    expect(await rotated.destinations.get(created.id)).toMatchObject({ mappings, auth, tls });
    expect(await rotated.destinations.update(created.id, { auth: null, tls: null })).toMatchObject({ auth: null, tls: null, mappings });
    await rotated.close();
    await store.close();
  });
});

import type { Kysely, Selectable } from 'kysely';
import type { OperationalEventType, OperationalFormat } from '../delivery/operational-events';
import { openCredential, sealCredential } from '../privacy/credential-seal';
import type { Keyring } from '../privacy/keyring';
import { countsByMasterKey } from './master-key-counts';
import { newId } from './ids';
import type { OperationalEndpointRow, Tables } from './tables';
import type { OperationalEndpoint, OperationalEndpointSettings, Store } from './types';

/** The secret's binding: the endpoint's id and the signing-secret field, as a destination's (privacy/credential-seal.ts). */
const SECRET_FIELD = { kind: 'signingSecret' } as const;

function toEndpoint(row: Selectable<OperationalEndpointRow>): OperationalEndpoint {
  return {
    id: row.id,
    url: row.url,
    eventTypes: JSON.parse(row.event_types) as OperationalEventType[],
    format: row.format as OperationalFormat,
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Operational endpoints. The secret is write-only: no read but `secretOf` (the sending
 * activity's) returns it, so no admin answer, log line or audit row can carry it.
 */
export function operationalEndpointStore(db: Kysely<Tables>, keyring: Keyring | undefined): Store['operationalEndpoints'] {
  const sealed = (id: string, secret: string) =>
    keyring ? { secret: sealCredential(keyring, keyring.activeKeyId, id, SECRET_FIELD, secret), secret_key_id: keyring.activeKeyId } : { secret, secret_key_id: null };
  const columns = (settings: Partial<OperationalEndpointSettings>) => ({
    ...(settings.url !== undefined && { url: settings.url }),
    ...(settings.eventTypes !== undefined && { event_types: JSON.stringify(settings.eventTypes) }),
    ...(settings.format !== undefined && { format: settings.format }),
    ...(settings.enabled !== undefined && { enabled: settings.enabled ? 1 : 0 }),
  });
  const opened = (id: string, row: { secret: string; secret_key_id: string | null }) => (row.secret_key_id === null ? row.secret : openCredential(keyring, row.secret_key_id, id, SECRET_FIELD, row.secret));
  const list = async () => (await db.selectFrom('operational_endpoints').selectAll().orderBy('created_at').orderBy('id').execute()).map(toEndpoint);
  return {
    async create(settings, secret) {
      const at = new Date().toISOString();
      const id = newId('opep');
      const row: OperationalEndpointRow = { id, url: settings.url, event_types: JSON.stringify(settings.eventTypes), format: settings.format, enabled: settings.enabled ? 1 : 0, ...sealed(id, secret), created_at: at, updated_at: at };
      await db.insertInto('operational_endpoints').values(row).execute();
      return toEndpoint(row);
    },

    list,
    // Uncached here; openStore serves it from a copy (operational-endpoint-copy.ts).
    listCached: list,

    async get(id) {
      const row = await db.selectFrom('operational_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toEndpoint(row);
    },

    async update(id, patch, secret) {
      const result = await db
        .updateTable('operational_endpoints')
        .set({ ...columns(patch), ...(secret !== undefined && sealed(id, secret)), updated_at: new Date().toISOString() })
        .where('id', '=', id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      const row = await db.selectFrom('operational_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return toEndpoint(row);
    },

    async delete(id) {
      const result = await db.deleteFrom('operational_endpoints').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async secretOf(id) {
      const row = await db.selectFrom('operational_endpoints').select(['secret', 'secret_key_id']).where('id', '=', id).executeTakeFirst();
      return row && opened(id, row);
    },

    async resealSecrets(limit) {
      if (!keyring) throw new Error('re-sealing secrets needs payload keys (PAYLOAD_KEYS); PAYLOAD_ENCRYPTION=off seals nothing');
      const rows = await db
        .selectFrom('operational_endpoints')
        .select(['id', 'secret', 'secret_key_id'])
        .where((eb) => eb.or([eb('secret_key_id', 'is', null), eb('secret_key_id', '<>', keyring.activeKeyId)]))
        .orderBy('id')
        .limit(limit)
        .execute();
      let resealed = 0;
      for (const row of rows) {
        // Rewritten only as it was read: a secret replaced meanwhile (sealed anew by its process) stays.
        const result = await db
          .updateTable('operational_endpoints')
          .set(sealed(row.id, opened(row.id, row)))
          .where('id', '=', row.id)
          .where('secret', '=', row.secret)
          .executeTakeFirst();
        resealed += Number(result.numUpdatedRows);
      }
      return { resealed, left: rows.length > 0 };
    },

    secretsByMasterKey: () => countsByMasterKey(db, 'operational_endpoints', 'secret_key_id'),
  };
}

import type { Kysely, Selectable, Updateable } from 'kysely';
import { newId } from './ids';
import type { DestinationRow, Tables } from './tables';
import type { Destination, Store, Webhook } from './types';

/** The integration's name in the seed; used when a destination is created without one. */
const DEFAULT_NAME = 'Webhooks';

function toDestination(row: Selectable<DestinationRow>): Destination {
  return {
    id: row.id,
    sourceId: row.source_id,
    name: row.name,
    enabled: row.enabled === 1,
    sharedSecret: row.shared_secret,
    webhooks: JSON.parse(row.webhooks) as Webhook[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Seed: an empty shared secret means "do not sign", the same as none; keep one spelling of it. */
function storedSecret(sharedSecret: string | null | undefined): string | null {
  return sharedSecret ? sharedSecret : null;
}

function storedWebhooks(webhooks: Webhook[]): string {
  return JSON.stringify(webhooks.map(({ url, headers }) => ({ url, headers: headers ?? {} })));
}

/** Nothing is delivered through a destination without a URL, however it is switched. */
function isDeliverable(row: Pick<DestinationRow, 'enabled' | 'webhooks'>): boolean {
  return row.enabled === 1 && (JSON.parse(row.webhooks) as unknown[]).length > 0;
}

export function destinationStore(db: Kysely<Tables>): Store['destinations'] {
  return {
    async create(sourceId, input) {
      const now = new Date().toISOString();
      const row: DestinationRow = {
        id: newId('dst'),
        source_id: sourceId,
        name: input.name ?? DEFAULT_NAME,
        enabled: input.enabled ? 1 : 0,
        shared_secret: storedSecret(input.sharedSecret),
        webhooks: storedWebhooks(input.webhooks),
        created_at: now,
        updated_at: now,
      };
      await db.insertInto('destinations').values(row).execute();
      return toDestination(row);
    },

    async get(id) {
      const row = await db.selectFrom('destinations').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toDestination(row);
    },

    async update(id, patch) {
      const changes: Updateable<DestinationRow> = { updated_at: new Date().toISOString() };
      if (patch.name !== undefined) changes.name = patch.name;
      if (patch.enabled !== undefined) changes.enabled = patch.enabled ? 1 : 0;
      if (patch.sharedSecret !== undefined) changes.shared_secret = storedSecret(patch.sharedSecret);
      if (patch.webhooks !== undefined) changes.webhooks = storedWebhooks(patch.webhooks);
      const row = await db
        .updateTable('destinations')
        .set(changes)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && toDestination(row);
    },

    async delete(id) {
      const result = await db.deleteFrom('destinations').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async listBySource(sourceId) {
      const rows = await db
        .selectFrom('destinations')
        .selectAll()
        .where('source_id', '=', sourceId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toDestination);
    },

    async listEnabledIds(sourceId) {
      const rows = await db
        .selectFrom('destinations')
        .select(['id', 'enabled', 'webhooks'])
        .where('source_id', '=', sourceId)
        .where('enabled', '=', 1)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.filter(isDeliverable).map((row) => row.id);
    },

    async listSourceIdsWithEnabled() {
      const rows = await db
        .selectFrom('destinations')
        .select(['source_id', 'enabled', 'webhooks'])
        .where('enabled', '=', 1)
        .orderBy('source_id')
        .execute();
      return [...new Set(rows.filter(isDeliverable).map((row) => row.source_id))];
    },
  };
}

import type { Kysely } from 'kysely';
import type { Tables } from './tables';
import type { Store, Webhook } from './types';

/**
 * Which destinations exist and which of their webhook URLs are switched off, read in one
 * query for a scrape (the `destination` label's bound and `switchyard_webhook_disabled`), and when
 * one URL was switched off (the incident an `endpoint.disabled` event names). Uncached: a worker's
 * destination cache may not yet have heard of the switch it just made.
 */
export function webhookSwitchStore(db: Kysely<Tables>): Store['webhookSwitches'] {
  return {
    async configured() {
      const rows = await db
        .selectFrom('destinations')
        .leftJoin('disabled_webhooks', 'disabled_webhooks.destination_id', 'destinations.id')
        .select(['destinations.id', 'destinations.webhooks', 'disabled_webhooks.url as disabled_url'])
        .execute();
      const destinationIds = new Set<string>();
      const disabled: { destinationId: string; index: number }[] = [];
      for (const row of rows) {
        destinationIds.add(row.id);
        if (row.disabled_url === null) continue;
        const index = (JSON.parse(row.webhooks) as Webhook[]).findIndex((webhook) => webhook.url === row.disabled_url);
        if (index >= 0) disabled.push({ destinationId: row.id, index });
      }
      return { destinationIds, disabled };
    },

    async disabledAt(destinationId, url) {
      const row = await db.selectFrom('disabled_webhooks').select('disabled_at').where('destination_id', '=', destinationId).where('url', '=', url).executeTakeFirst();
      return row?.disabled_at;
    },
  };
}

import type { Kysely } from 'kysely';
import { STOP_REASONS } from '../delivery/stop-reasons';
import { chunks } from './chunks';
import type { MessageFateRow, Tables } from './tables';
import type { MessageFate, Store } from './types';

/** Rows per INSERT (11 parameters each) and ids per `IN (...)` list. */
const PER_QUERY = 300;

const toRow = (f: MessageFate): MessageFateRow => ({
  source_id: f.sourceId,
  message_id: f.messageId,
  destination_id: f.destinationId,
  received_at: f.receivedAt,
  type: f.type,
  decision: f.decision,
  filter_id: f.filterId ?? null,
  user_hash: f.userHash ?? null,
  anonymous_hash: f.anonymousHash ?? null,
  event_hash: f.eventHash ?? null,
  summary: f.summary === undefined ? null : JSON.stringify(f.summary),
});

const fromRow = (row: MessageFateRow): MessageFate => ({
  sourceId: row.source_id,
  messageId: row.message_id,
  destinationId: row.destination_id,
  receivedAt: row.received_at,
  type: row.type as MessageFate['type'],
  decision: row.decision as MessageFate['decision'],
  ...(row.filter_id !== null && { filterId: row.filter_id }),
  ...(row.user_hash !== null && { userHash: row.user_hash }),
  ...(row.anonymous_hash !== null && { anonymousHash: row.anonymous_hash }),
  ...(row.event_hash !== null && { eventHash: row.event_hash }),
  ...(row.summary !== null && { summary: JSON.parse(row.summary) as NonNullable<MessageFate['summary']> }),
});

/** A page's position: the last row's (receivedAt, messageId, destinationId), opaque to callers. */
const encodeCursor = (f: MessageFate) => Buffer.from(JSON.stringify([f.receivedAt, f.messageId, f.destinationId])).toString('base64url');

function decodeCursor(cursor: string): [string, string, string] | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return Array.isArray(value) && value.length === 3 && value.every((v) => typeof v === 'string') ? (value as [string, string, string]) : undefined;
  } catch {
    return undefined;
  }
}

/** Each ingested call's decision per destination: one row per (source, message, destination). */
export function messageFateStore(db: Kysely<Tables>): Store['fates'] {
  return {
    async add(fates) {
      for (const part of chunks(fates.map(toRow), PER_QUERY)) {
        await db.insertInto('message_fates').values(part).onConflict((oc) => oc.columns(['source_id', 'message_id', 'destination_id']).doNothing()).execute();
      }
    },

    async list(filter, size, cursor) {
      let query = db.selectFrom('message_fates').selectAll();
      if (filter.sourceId !== undefined) query = query.where('source_id', '=', filter.sourceId);
      if (filter.destinationId !== undefined) query = query.where('destination_id', '=', filter.destinationId);
      if (filter.decision === 'stopped') query = query.where('decision', 'in', [...STOP_REASONS]);
      else if (filter.decision !== undefined) query = query.where('decision', '=', filter.decision);
      const { idHashes, eventHash } = filter;
      if (idHashes !== undefined) query = query.where((eb) => eb.or([eb('user_hash', 'in', idHashes), eb('anonymous_hash', 'in', idHashes)]));
      if (eventHash !== undefined) query = query.where('event_hash', '=', eventHash);
      if (filter.since !== undefined) query = query.where('received_at', '>=', filter.since);
      if (filter.until !== undefined) query = query.where('received_at', '<', filter.until);
      if (cursor !== undefined) {
        const at = decodeCursor(cursor);
        if (!at) return 'invalid_cursor';
        const [receivedAt, messageId, destinationId] = at;
        query = query.where((eb) =>
          eb.or([
            eb('received_at', '<', receivedAt),
            eb.and([eb('received_at', '=', receivedAt), eb.or([eb('message_id', '<', messageId), eb.and([eb('message_id', '=', messageId), eb('destination_id', '<', destinationId)])])]),
          ]),
        );
      }
      const rows = await query.orderBy('received_at', 'desc').orderBy('message_id', 'desc').orderBy('destination_id', 'desc').limit(size + 1).execute();
      const page = rows.slice(0, size).map(fromRow);
      return { fates: page, ...(rows.length > size && { next: encodeCursor(page[page.length - 1]) }) };
    },

    async prune(beforeIso) {
      const result = await db.deleteFrom('message_fates').where('received_at', '<', beforeIso).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async forget(idHashes) {
      let deleted = 0;
      for (const part of chunks([...new Set(idHashes)], PER_QUERY)) {
        const result = await db.deleteFrom('message_fates').where((eb) => eb.or([eb('user_hash', 'in', part), eb('anonymous_hash', 'in', part)])).executeTakeFirst();
        deleted += Number(result.numDeletedRows);
      }
      return deleted;
    },
  };
}

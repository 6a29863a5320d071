import type { Kysely, Selectable } from 'kysely';
import { newId } from './ids';
import type { AuditRow, Tables } from './tables';
import type { AuditRecord, AuditStore } from './types';

/** No row younger than this may be deleted, by the API or by hand: the database's own floor (migration 0024). */
export const AUDIT_LOG_KEPT_AT_LEAST_DAYS = 90;

function toRecord(row: Selectable<AuditRow>): AuditRecord {
  return {
    id: row.id,
    at: row.at,
    actor: { tokenId: row.actor_token_id, name: row.actor_name },
    action: row.action,
    target: row.target,
    outcome: row.outcome as AuditRecord['outcome'],
    requestId: row.request_id,
    ip: row.ip,
    changed: JSON.parse(row.changed) as string[],
  };
}

/**
 * The audit log: append, read and, past AUDIT_RETENTION, prune (the migrations' triggers refuse
 * UPDATE always, and DELETE of a row younger than AUDIT_LOG_KEPT_AT_LEAST_DAYS).
 */
export function auditLogStore(db: Kysely<Tables>): AuditStore {
  return {
    async append(entry) {
      const row: AuditRow = {
        id: newId('adt'),
        at: entry.at,
        actor_token_id: entry.actor.tokenId,
        actor_name: entry.actor.name,
        action: entry.action,
        target: entry.target,
        outcome: entry.outcome,
        request_id: entry.requestId,
        ip: entry.ip,
        changed: JSON.stringify(entry.changed),
      };
      await db.insertInto('audit_log').values(row).execute();
      return toRecord(row);
    },

    async prune(before) {
      const result = await db.deleteFrom('audit_log').where('at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async list({ since, until, actor, action, target, after, limit }) {
      let query = db.selectFrom('audit_log').selectAll();
      if (since !== undefined) query = query.where('at', '>=', since);
      if (until !== undefined) query = query.where('at', '<', until);
      if (actor !== undefined) query = query.where((eb) => eb.or([eb('actor_name', '=', actor), eb('actor_token_id', '=', actor)]));
      if (action !== undefined) query = query.where('action', '=', action);
      if (target !== undefined) query = query.where('target', '=', target);
      if (after !== undefined) query = query.where((eb) => eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]));
      const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toRecord);
    },
  };
}

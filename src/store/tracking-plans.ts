import { sql, type Kysely, type Selectable } from 'kysely';
import { chunks } from './chunks';
import { newId } from './ids';
import type { Tables, TrackingPlanRow, TrackingPlanRuleRow } from './tables';
import { erasedAtEach, type ErasedIdHashes } from './erasures';
import type { Store, TrackingPlan, TrackingPlanRule, ViolationSummary } from './types';
import { writeTransaction } from './write-transaction';

/** The most violation rows (one per kind and minute) one list reads: the newest of its window. */
export const MAX_VIOLATION_ROWS = 10_000;
/** The most kinds (event, field, violation type) one list answers unless asked for fewer. */
export const MAX_VIOLATION_KINDS = 1_000;

/** Rows per INSERT, well under SQLite's bound-parameter limit (11 columns a violation row). */
const ROWS_PER_INSERT = 80;
/** Rows per INSERT of violation users (3 columns), and hashes per `IN (...)` list. */
const USERS_PER_QUERY = 300;
/** The user hash of a bucket whose users were past the aggregator's bound: every DELETE regulation drops it. */
export const ANY_VIOLATION_USER = '*';

function toPlan(row: Selectable<TrackingPlanRow>): TrackingPlan {
  return { id: row.id, name: row.name, ...(row.description !== null && { description: row.description }), type: row.type, createdAt: row.created_at, updatedAt: row.updated_at };
}

function toRule(row: Selectable<TrackingPlanRuleRow>): TrackingPlanRule {
  return {
    type: row.type,
    ...(row.key !== '' && { key: row.key }),
    jsonSchema: JSON.parse(row.json_schema) as Record<string, unknown>,
    version: Number(row.version),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A rules page's position: the last rule's (type, key, version), opaque to callers. */
const encodeCursor = (rule: TrackingPlanRule) => Buffer.from(JSON.stringify([rule.type, rule.key ?? '', rule.version])).toString('base64url');
function decodeCursor(cursor: string): [string, string, number] | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 3 && typeof value[0] === 'string' && typeof value[1] === 'string' && Number.isInteger(value[2])) return value as [string, string, number];
  } catch {
    // Not a cursor a page gave: the first page.
  }
  return undefined;
}

/** The tracking plans' tables (migration 0027_tracking_plans). Every change of a plan's rules bumps its revision. */
export function trackingPlanStore(db: Kysely<Tables>): Store['trackingPlans'] {
  const bump = (trx: Kysely<Tables>, planId: string, at: string) =>
    trx
      .updateTable('tracking_plans')
      .set({ revision: sql`revision + 1`, updated_at: at })
      .where('id', '=', planId)
      .executeTakeFirst()
      .then((result) => result.numUpdatedRows > 0n);
  const ruleRow = (planId: string, rule: { type: string; key?: string; version: number; jsonSchema: unknown }, at: string, createdAt = at): TrackingPlanRuleRow => ({
    plan_id: planId,
    type: rule.type,
    key: rule.key ?? '',
    version: rule.version,
    json_schema: JSON.stringify(rule.jsonSchema),
    created_at: createdAt,
    updated_at: at,
  });

  return {
    async create({ name, description, type }) {
      const at = new Date().toISOString();
      const row: TrackingPlanRow = { id: newId('tp'), name, description: description ?? null, type, revision: 1, created_at: at, updated_at: at };
      await db.insertInto('tracking_plans').values(row).execute();
      return toPlan(row);
    },

    async list() {
      return (await db.selectFrom('tracking_plans').selectAll().orderBy('created_at').orderBy('id').execute()).map(toPlan);
    },

    async get(id) {
      const row = await db.selectFrom('tracking_plans').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toPlan(row);
    },

    async update(id, patch) {
      const at = new Date().toISOString();
      const result = await db
        .updateTable('tracking_plans')
        .set({
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.description !== undefined && { description: patch.description }),
          ...(patch.type !== undefined && { type: patch.type }),
          revision: sql`revision + 1`,
          updated_at: at,
        })
        .where('id', '=', id)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return undefined;
      return this.get(id);
    },

    async delete(id) {
      return writeTransaction(db, async (trx) => {
        await trx.deleteFrom('tracking_plan_rules').where('plan_id', '=', id).execute();
        await trx.deleteFrom('tracking_plan_sources').where('plan_id', '=', id).execute();
        const result = await trx.deleteFrom('tracking_plans').where('id', '=', id).executeTakeFirst();
        return result.numDeletedRows > 0n;
      });
    },

    async rules(planId, count, cursor) {
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      let query = db.selectFrom('tracking_plan_rules').selectAll().where('plan_id', '=', planId);
      if (after) {
        const [type, key, version] = after;
        query = query.where((eb) =>
          eb.or([eb('type', '>', type), eb.and([eb('type', '=', type), eb('key', '>', key)]), eb.and([eb('type', '=', type), eb('key', '=', key), eb('version', '>', version)])]),
        );
      }
      const rows = await query.orderBy('type').orderBy('key').orderBy('version').limit(count + 1).execute();
      const { total } = await db
        .selectFrom('tracking_plan_rules')
        .select((eb) => eb.fn.countAll<number | string>().as('total'))
        .where('plan_id', '=', planId)
        .executeTakeFirstOrThrow();
      const page = rows.slice(0, count).map(toRule);
      return { rules: page, total: Number(total), ...(rows.length > count && { next: encodeCursor(page[page.length - 1]) }) };
    },

    async allRules(planId) {
      const rows = await db.selectFrom('tracking_plan_rules').selectAll().where('plan_id', '=', planId).orderBy('type').orderBy('key').orderBy('version').execute();
      return rows.map(toRule);
    },

    async replaceRules(planId, rules) {
      return writeTransaction(db, async (trx) => {
        const at = new Date().toISOString();
        if (!(await bump(trx, planId, at))) return false;
        await trx.deleteFrom('tracking_plan_rules').where('plan_id', '=', planId).execute();
        for (const part of chunks(rules, 100)) await trx.insertInto('tracking_plan_rules').values(part.map((rule) => ruleRow(planId, rule, at))).execute();
        return true;
      });
    },

    async upsertRules(planId, rules) {
      return writeTransaction(db, async (trx) => {
        const at = new Date().toISOString();
        if (!(await bump(trx, planId, at))) return false;
        for (const rule of rules) {
          const key = rule.key ?? '';
          const existing = await trx
            .selectFrom('tracking_plan_rules')
            .select('created_at')
            .where('plan_id', '=', planId)
            .where('type', '=', rule.type)
            .where('key', '=', key)
            .where('version', '=', rule.version)
            .executeTakeFirst();
          await trx.deleteFrom('tracking_plan_rules').where('plan_id', '=', planId).where('type', '=', rule.type).where('key', '=', key).where('version', '=', rule.version).execute();
          const renamed = rule.newKey !== undefined ? { ...rule, key: rule.newKey } : rule;
          // A rename onto a key that exists replaces that version, as an upsert would.
          await trx
            .deleteFrom('tracking_plan_rules')
            .where('plan_id', '=', planId)
            .where('type', '=', renamed.type)
            .where('key', '=', renamed.key ?? '')
            .where('version', '=', renamed.version)
            .execute();
          await trx.insertInto('tracking_plan_rules').values(ruleRow(planId, renamed, at, existing?.created_at)).execute();
        }
        return true;
      });
    },

    async deleteRules(planId, rules) {
      return writeTransaction(db, async (trx) => {
        if (!(await bump(trx, planId, new Date().toISOString()))) return false;
        for (const rule of rules) {
          await trx.deleteFrom('tracking_plan_rules').where('plan_id', '=', planId).where('type', '=', rule.type).where('key', '=', rule.key ?? '').where('version', '=', rule.version).execute();
        }
        return true;
      });
    },

    async connect(planId, sourceId) {
      return writeTransaction(db, async (trx) => {
        const plan = await trx.selectFrom('tracking_plans').select('id').where('id', '=', planId).executeTakeFirst();
        const source = await trx.selectFrom('sources').select('id').where('id', '=', sourceId).executeTakeFirst();
        if (!plan || !source) return 'missing' as const;
        const current = await trx.selectFrom('tracking_plan_sources').select('plan_id').where('source_id', '=', sourceId).executeTakeFirst();
        if (current) return current.plan_id === planId ? ('already' as const) : ('taken' as const);
        await trx.insertInto('tracking_plan_sources').values({ source_id: sourceId, plan_id: planId, connected_at: new Date().toISOString() }).execute();
        return 'connected' as const;
      });
    },

    async disconnect(planId, sourceId) {
      const result = await db.deleteFrom('tracking_plan_sources').where('plan_id', '=', planId).where('source_id', '=', sourceId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async sources(planId) {
      const rows = await db.selectFrom('tracking_plan_sources').select('source_id').where('plan_id', '=', planId).orderBy('connected_at').orderBy('source_id').execute();
      return rows.map((row) => row.source_id);
    },

    async forSource(sourceId) {
      // One round trip per ingest request: the controls and the plan's revision beside each other.
      const row = await db
        .selectFrom('sources')
        .leftJoin('source_schema_settings', 'source_schema_settings.source_id', 'sources.id')
        .leftJoin('tracking_plan_sources', 'tracking_plan_sources.source_id', 'sources.id')
        .leftJoin('tracking_plans', 'tracking_plans.id', 'tracking_plan_sources.plan_id')
        .select(['source_schema_settings.settings as settings', 'tracking_plans.id as plan_id', 'tracking_plans.name as plan_name', 'tracking_plans.revision as revision'])
        .where('sources.id', '=', sourceId)
        .executeTakeFirst();
      if (!row) return {};
      return {
        ...(row.plan_id !== null && row.plan_id !== undefined && { plan: { id: row.plan_id, name: row.plan_name ?? '', revision: Number(row.revision) } }),
        ...(row.settings !== null && row.settings !== undefined && { controls: row.settings }),
      };
    },

    async controls(sourceId) {
      const row = await db.selectFrom('source_schema_settings').select('settings').where('source_id', '=', sourceId).executeTakeFirst();
      return row?.settings;
    },

    async setControls(sourceId, controls) {
      const at = new Date().toISOString();
      await db
        .insertInto('source_schema_settings')
        .values({ source_id: sourceId, settings: controls, updated_at: at })
        .onConflict((conflict) => conflict.column('source_id').doUpdateSet({ settings: controls, updated_at: at }))
        .execute();
    },
  };
}

/** When a minute began, as the erasure list writes times (ISO 8601). */
const minuteStart = (minute: number) => new Date(minute * 60_000).toISOString();

/** One source's minute of violations, and who it counted. */
async function dropBucket(trx: Kysely<Tables>, sourceId: string, minute: number): Promise<void> {
  await trx.deleteFrom('tracking_plan_violations').where('source_id', '=', sourceId).where('minute', '=', minute).execute();
  await trx.deleteFrom('tracking_plan_violation_users').where('source_id', '=', sourceId).where('minute', '=', minute).execute();
}

/** Violations per source and minute: every API process adds its counts to the same rows. */
export function violationStore(db: Kysely<Tables>, hashes: ErasedIdHashes): Store['violations'] {
  return {
    async add(rows, options = {}) {
      const users = (options.users ?? []).map((user) => ({ source_id: user.sourceId, minute: user.minute, user_hash: user.userId === undefined ? ANY_VIOLATION_USER : hashes(user.userId)[0] }));
      if (rows.length === 0 && users.length === 0 && options.deleteBeforeMinute === undefined) return;
      await db.transaction().execute(async (trx) => {
        const values = rows.map((row) => ({
          source_id: row.sourceId,
          minute: row.minute,
          event_type: row.eventType,
          event_name: row.eventName,
          field: row.field,
          violation_type: row.violationType,
          description: row.description,
          count: row.count,
          first_seen_at: row.firstSeenAt,
          last_seen_at: row.lastSeenAt,
          last_message_id: row.lastMessageId,
        }));
        for (const part of chunks(values, ROWS_PER_INSERT)) {
          await trx
            .insertInto('tracking_plan_violations')
            .values(part)
            .onConflict((conflict) =>
              conflict.columns(['source_id', 'minute', 'event_type', 'event_name', 'field', 'violation_type']).doUpdateSet((eb) => ({
                count: eb(eb.ref('tracking_plan_violations.count'), '+', eb.ref('excluded.count')),
                last_seen_at: eb.ref('excluded.last_seen_at'),
                last_message_id: eb.ref('excluded.last_message_id'),
                description: eb.ref('excluded.description'),
              })),
            )
            .execute();
        }
        // In the same transaction as the counts: no row is ever written without its users.
        for (const part of chunks(users, USERS_PER_QUERY)) {
          await trx
            .insertInto('tracking_plan_violation_users')
            .values(part)
            .onConflict((conflict) => conflict.columns(['source_id', 'minute', 'user_hash']).doNothing())
            .execute();
        }
        // Counts held in memory across a DELETE regulation (an API process's flush interval) land
        // after it: a bucket that began before its user was erased is dropped here as the regulation would have.
        const erasedAt = await erasedAtEach(trx, [...new Set(users.map((user) => user.user_hash).filter((hash) => hash !== ANY_VIOLATION_USER))]);
        const late = new Map(users.filter((user) => (erasedAt.get(user.user_hash) ?? '') >= minuteStart(user.minute)).map((user) => [`${user.source_id}\u0000${user.minute}`, user]));
        for (const { source_id, minute } of late.values()) await dropBucket(trx, source_id, minute);
        if (options.deleteBeforeMinute !== undefined) {
          await trx.deleteFrom('tracking_plan_violations').where('minute', '<', options.deleteBeforeMinute).execute();
          await trx.deleteFrom('tracking_plan_violation_users').where('minute', '<', options.deleteBeforeMinute).execute();
        }
      });
    },

    async forgetUsers(ids) {
      // Names are aggregated across users: dropping the whole bucket is the only way to remove theirs.
      const userHashes = [...new Set([ANY_VIOLATION_USER, ...ids.flatMap(hashes)])];
      await db.transaction().execute(async (trx) => {
        const buckets = new Map<string, { source_id: string; minute: number }>();
        for (const part of chunks(userHashes, USERS_PER_QUERY)) {
          const rows = await trx.selectFrom('tracking_plan_violation_users').select(['source_id', 'minute']).where('user_hash', 'in', part).execute();
          for (const row of rows) buckets.set(`${row.source_id}\u0000${row.minute}`, { source_id: row.source_id, minute: Number(row.minute) });
        }
        for (const { source_id, minute } of buckets.values()) await dropBucket(trx, source_id, minute);
      });
    },

    async list(sourceId, sinceMinute, untilMinute, eventName, limit = MAX_VIOLATION_KINDS) {
      let query = db.selectFrom('tracking_plan_violations').selectAll().where('source_id', '=', sourceId).where('minute', '>=', sinceMinute).where('minute', '<', untilMinute);
      if (eventName !== undefined) query = query.where('event_name', '=', eventName);
      // The newest rows of the window, at most MAX_VIOLATION_ROWS: a week of a busy source is never read whole into memory.
      const rows = (await query.orderBy('minute', 'desc').limit(MAX_VIOLATION_ROWS).execute()).reverse();
      const byKind = new Map<string, ViolationSummary>();
      for (const row of rows) {
        const key = JSON.stringify([row.event_type, row.event_name, row.field, row.violation_type]);
        const seen = byKind.get(key);
        if (!seen) {
          byKind.set(key, {
            eventType: row.event_type,
            eventName: row.event_name,
            field: row.field,
            violationType: row.violation_type,
            description: row.description,
            count: Number(row.count),
            firstSeenAt: row.first_seen_at,
            lastSeenAt: row.last_seen_at,
            lastMessageId: row.last_message_id,
          });
          continue;
        }
        seen.count += Number(row.count);
        if (row.first_seen_at < seen.firstSeenAt) seen.firstSeenAt = row.first_seen_at;
        if (row.last_seen_at >= seen.lastSeenAt) Object.assign(seen, { lastSeenAt: row.last_seen_at, lastMessageId: row.last_message_id, description: row.description });
      }
      return [...byKind.values()].sort((a, b) => b.count - a.count || (a.lastSeenAt < b.lastSeenAt ? 1 : -1)).slice(0, limit);
    },
  };
}

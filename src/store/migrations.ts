import { Kysely, Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import { personasMigration } from './personas-migration';
import { DATA_KEY_CHANNEL, DESTINATION_CHANNEL, ERASURE_CHANNEL, OPERATIONAL_ENDPOINT_CHANNEL, SOURCE_CHANNEL } from './store-notifications';
import { AUDIT_LOG_KEPT_AT_LEAST_DAYS } from './audit-log';
import { dialectOf } from './dialect';
import type { Tables } from './tables';
import { LATENCY_COLUMNS } from './webhook-health-columns';
import { schemaProblemMessage, schemaProblems } from './schema-check';
import { ARCHIVE_TABLE } from './message-archive-table';

/**
 * Migrations live in code (not a folder read at run time) so they ship inside the bundle and run
 * the same from `tsx`, jest and compiled output. Names sort in the order they must run; never
 * edit one that has shipped, add the next.
 */
const MIGRATIONS: Record<string, Migration> = {
  '0001_settings': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('sources')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('write_key_hash', 'text', (c) => c.notNull())
        .addColumn('write_key_hint', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      // Every ingest request looks its source up by this hash.
      await db.schema.createIndex('sources_write_key_hash').unique().on('sources').column('write_key_hash').execute();

      await db.schema
        .createTable('destinations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('shared_secret', 'text')
        .addColumn('webhooks', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('destinations_source_id').on('destinations').column('source_id').execute();

      await db.schema
        .createTable('regulations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('regulation_type', 'text', (c) => c.notNull())
        .addColumn('subject_type', 'text', (c) => c.notNull())
        .addColumn('subject_ids', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  // Per-webhook state the delivery side writes (a 410 Gone switches a URL off, with the reason),
  // and the Standard Webhooks signing secret with the previous one kept for a rotation overlap.
  '0002_delivery_safety': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('disabled_webhooks')
        .addColumn('destination_id', 'text', (c) => c.notNull().references('destinations.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('disabled_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('disabled_webhooks_pk', ['destination_id', 'url'])
        .execute();
      await db.schema.alterTable('destinations').addColumn('signing_secret', 'text').execute();
      await db.schema.alterTable('destinations').addColumn('previous_signing_secret', 'text').execute();
      await db.schema.alterTable('destinations').addColumn('previous_signing_secret_until', 'text').execute();
    },
  },
  // Profiles, audiences, computed traits and their sync snapshots (src/store/personas-migration.ts).
  '0003_personas': personasMigration,
  // Which sources have seen which user ids (and the ids seen with them), so a DELETE regulation
  // notifies only those; and the one-way hashes of erased ids that attempts check at send time.
  '0004_source_users': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('source_users')
        .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('first_seen_at', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('source_users_pk', ['source_id', 'user_id'])
        .execute();
      // A regulation looks users up across every source.
      await db.schema.createIndex('source_users_user_id').on('source_users').column('user_id').execute();

      await db.schema
        .createTable('source_user_links')
        .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('linked_id', 'text', (c) => c.notNull())
        .addColumn('first_seen_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('source_user_links_pk', ['user_id', 'linked_id', 'source_id'])
        .execute();
      await db.schema.createIndex('source_user_links_linked_id').on('source_user_links').column('linked_id').execute();

      await db.schema
        .createTable('erased_ids')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('erased_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  // PostgreSQL only: every change to a destination or its switched-off webhooks NOTIFYs its id, in
  // the changing transaction (delivered at commit, dropped on rollback), so a worker's cache of
  // destinations drops the entry before its next attempt (notified-cache.ts). A source delete
  // reaches it too: the foreign key's cascade fires these row triggers. SQLite needs no cache.
  '0005_destination_notifications': {
    async up(db: Kysely<any>) {
      if (dialectOf(db) !== 'postgres') return;
      await sql`
        create function switchyard_notify_destination() returns trigger language plpgsql as $$
        begin
          if tg_table_name = 'destinations' then
            perform pg_notify(${sql.lit(DESTINATION_CHANNEL)}, case tg_op when 'DELETE' then old.id else new.id end);
          elsif tg_op = 'DELETE' then
            perform pg_notify(${sql.lit(DESTINATION_CHANNEL)}, old.destination_id);
          else
            perform pg_notify(${sql.lit(DESTINATION_CHANNEL)}, new.destination_id);
          end if;
          return null;
        end $$`.execute(db);
      await sql`create trigger destinations_notify after insert or update or delete on destinations for each row execute function switchyard_notify_destination()`.execute(db);
      await sql`create trigger disabled_webhooks_notify after insert or update or delete on disabled_webhooks for each row execute function switchyard_notify_destination()`.execute(db);
    },
  },
  // PostgreSQL only: a regulation's erasures NOTIFY once per statement, with no payload (not even
  // the hashes), so each worker's cache of erasure checks forgets everything before the next attempt.
  '0006_erasure_notifications': {
    async up(db: Kysely<any>) {
      if (dialectOf(db) !== 'postgres') return;
      await sql`
        create function switchyard_notify_erasure() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${sql.lit(ERASURE_CHANNEL)}, '');
          return null;
        end $$`.execute(db);
      await sql`create trigger erased_ids_notify after insert or update or delete on erased_ids for each statement execute function switchyard_notify_erasure()`.execute(db);
    },
  },
  // Webhook health: per destination, webhook URL and minute, the attempts of every worker
  // added up, with a fixed latency histogram (one integer column per bucket, so an upsert adds to
  // it); no foreign key, so a flush never fails on a destination deleted meanwhile (rows age out).
  '0007_webhook_health': {
    async up(db: Kysely<any>) {
      let table = db.schema
        .createTable('webhook_health')
        .addColumn('destination_id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('minute', 'integer', (c) => c.notNull())
        .addColumn('successes', 'integer', (c) => c.notNull())
        .addColumn('retry_failures', 'integer', (c) => c.notNull())
        .addColumn('permanent_failures', 'integer', (c) => c.notNull());
      for (const column of LATENCY_COLUMNS) table = table.addColumn(column, 'integer', (c) => c.notNull());
      await table
        .addColumn('last_error', 'text')
        .addColumn('last_error_ms', 'integer')
        .addPrimaryKeyConstraint('webhook_health_pk', ['destination_id', 'url', 'minute'])
        .execute();
      // Flushes delete buckets older than the retention by minute alone.
      await db.schema.createIndex('webhook_health_minute').on('webhook_health').column('minute').execute();
    },
  },
  // A regulation keeps keyed hashes of its subject ids, not the ids. Rows written before
  // (plaintext, 0) are hashed when a process with keys opens the store (regulations.ts
  // hashPlaintextSubjectIds): a migration has no keys, and with PAYLOAD_ENCRYPTION=off they stay.
  '0008_regulation_subject_hashes': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('regulations').addColumn('subject_ids_hashed', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  },
  // Crypto-shredding: one data key per subject, wrapped (store/data-keys.ts). Text, not
  // bytea/blob, so both dialects read the same base64; SQLite's secure_delete scrubs destroyed rows.
  '0009_data_keys': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('data_keys')
        .addColumn('subject_hash', 'text', (c) => c.primaryKey())
        .addColumn('master_key_id', 'text', (c) => c.notNull())
        .addColumn('wrapped_key', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  // Flow control: a destination's rate limit and pause, the limiter state every process
  // shares (one row per rate-limited destination), URLs paused by backpressure, and the time
  // messages waited in webhook health. Epoch milliseconds are bigint: they overflow PostgreSQL's integer.
  '0010_flow_control': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('destinations').addColumn('max_requests_per_second', 'integer').execute();
      await db.schema.alterTable('destinations').addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('destinations').addColumn('paused_at', 'text').execute();
      await db.schema
        .createTable('destination_rates')
        .addColumn('destination_id', 'text', (c) => c.primaryKey().references('destinations.id').onDelete('cascade'))
        .addColumn('next_slot_ms', 'bigint', (c) => c.notNull())
        .addColumn('last_send_ms', 'bigint')
        .execute();
      await db.schema
        .createTable('webhook_backpressure')
        .addColumn('destination_id', 'text', (c) => c.notNull().references('destinations.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('until_ms', 'bigint', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('webhook_backpressure_pk', ['destination_id', 'url'])
        .execute();
      // A backpressure pause is part of the destination a worker reads (and caches, on PostgreSQL).
      if (dialectOf(db) === 'postgres') {
        await sql`create trigger webhook_backpressure_notify after insert or update or delete on webhook_backpressure for each row execute function switchyard_notify_destination()`.execute(db);
      }
      for (const column of ['throttled_ms', 'held_ms', 'backpressured_ms']) {
        await db.schema.alterTable('webhook_health').addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      }
    },
  },
  // PostgreSQL only: a data key destroyed (a regulation), made anew or re-wrapped NOTIFYs on the
  // erasure channel, once per statement and with no payload, so each worker's cache of data keys
  // forgets everything before its next attempt (a destroy stops every worker at once).
  '0011_data_key_notifications': {
    async up(db: Kysely<any>) {
      if (dialectOf(db) !== 'postgres') return;
      await sql`create trigger data_keys_notify after insert or update or delete on data_keys for each statement execute function switchyard_notify_erasure()`.execute(db);
    },
  },
  // Receiver credentials sealed under the payload keys, the key's id on the row. Rows
  // written before stay plaintext (null) until a process with keys opens the store and seals them
  // (credentials-at-rest.ts sealPlaintextCredentials): a migration has no keys.
  '0012_credentials_at_rest': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('destinations').addColumn('credentials_key_id', 'text').execute();
    },
  },
  // PostgreSQL only: 0011 made every new user's first key empty each worker's erasure and
  // data-key caches. Now each row NOTIFYs its subject hash on its own channel, and a worker drops
  // that subject's key only; erasures keep their own notification (0006). Same trigger name.
  '0013_data_key_notifications_per_subject': {
    async up(db: Kysely<any>) {
      if (dialectOf(db) !== 'postgres') return;
      await sql`drop trigger data_keys_notify on data_keys`.execute(db);
      await sql`
        create function switchyard_notify_data_key() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${sql.lit(DATA_KEY_CHANNEL)}, case tg_op when 'DELETE' then old.subject_hash else new.subject_hash end);
          return null;
        end $$`.execute(db);
      await sql`create trigger data_keys_notify after insert or update or delete on data_keys for each row execute function switchyard_notify_data_key()`.execute(db);
    },
  },
  // Consent settings per destination, as JSON; null is the default, so rows need no backfill.
  '0014_destination_consent': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('destinations').addColumn('consent', 'text').execute();
    },
  },
  // Suppressed ids, one-way hashes like erased_ids; on PostgreSQL a change NOTIFYs the
  // erasure channel, so every worker's cached suppression checks are dropped before its next attempt.
  '0015_suppressions': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('suppressed_ids')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('suppressed_at', 'text', (c) => c.notNull())
        .addColumn('lifted_at', 'text')
        .execute();
      if (dialectOf(db) !== 'postgres') return;
      await sql`create trigger suppressed_ids_notify after insert or update or delete on suppressed_ids for each statement execute function switchyard_notify_erasure()`.execute(db);
    },
  },
  // The overview: per-minute counts every API process adds to (no foreign keys, so a
  // flush never fails on a source or destination deleted meanwhile; rows age out).
  '0016_message_counts': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('received_counts')
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('minute', 'integer', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('received_counts_pk', ['source_id', 'minute'])
        .execute();
      await db.schema
        .createTable('filtered_counts')
        .addColumn('destination_id', 'text', (c) => c.notNull())
        .addColumn('minute', 'integer', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('filter_id', 'text', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('filtered_counts_pk', ['destination_id', 'minute', 'reason', 'filter_id'])
        .execute();
      await db.schema.createIndex('received_counts_minute').on('received_counts').column('minute').execute();
      await db.schema.createIndex('filtered_counts_minute').on('filtered_counts').column('minute').execute();
    },
  },
  // Destination filters in Segment's Public API shape, at most 10 per destination.
  '0017_destination_filters': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('destination_filters')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('destination_id', 'text', (c) => c.notNull().references('destinations.id').onDelete('cascade'))
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('condition', 'text', (c) => c.notNull())
        .addColumn('actions', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('destination_filters_destination_id').on('destination_filters').columns(['destination_id', 'created_at']).execute();
    },
  },
  // Scoped admin tokens (hashes only) and the audit log of every admin change, which
  // the database itself keeps append-only: an UPDATE or DELETE of a row fails on both dialects.
  '0018_tokens_and_audit': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('admin_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text')
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor_token_id', 'text')
        .addColumn('actor_name', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('changed', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_log_at').on('audit_log').columns(['at', 'id']).execute();
      if (dialectOf(db) === 'postgres') {
        await sql`
          create function switchyard_audit_append_only() returns trigger language plpgsql as $$
          begin
            raise exception 'audit_log is append-only';
          end $$`.execute(db);
        await sql`create trigger audit_log_append_only before update or delete on audit_log for each row execute function switchyard_audit_append_only()`.execute(db);
      } else {
        await sql`create trigger audit_log_no_update before update on audit_log begin select raise(abort, 'audit_log is append-only'); end`.execute(db);
        await sql`create trigger audit_log_no_delete before delete on audit_log begin select raise(abort, 'audit_log is append-only'); end`.execute(db);
      }
    },
  },
  // Personas syncs respect consent: each profile keeps the consent preferences of the
  // newest event that carried them (JSON), and that event's timestamp to tell newer from older.
  '0021_profile_consent': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('profiles').addColumn('consent', 'text').execute();
      await db.schema.alterTable('profiles').addColumn('consent_at', 'text').execute();
    },
  },
  // Every accepted message, sealed, for ARCHIVE_RETENTION; and the replays made of it.
  '0019_archive': {
    async up(db: Kysely<any>) {
      await createMessageArchive(db);
      await db.schema
        .createTable('replays')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('destination_id', 'text', (c) => c.notNull())
        .addColumn('since', 'text', (c) => c.notNull())
        .addColumn('until', 'text', (c) => c.notNull())
        .addColumn('trigger', 'text')
        .addColumn('dry_run', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('matched', 'integer', (c) => c.notNull())
        .addColumn('started', 'integer', (c) => c.notNull())
        .addColumn('delivered', 'integer', (c) => c.notNull())
        .addColumn('failed', 'integer', (c) => c.notNull())
        .addColumn('skipped_erased', 'integer', (c) => c.notNull())
        .addColumn('skipped_suppressed', 'integer', (c) => c.notNull())
        .addColumn('skipped_filtered', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .execute();
      await db.schema.createIndex('replays_created_at').on('replays').column('created_at').execute();
    },
  },
  // Actions destinations (mappings) and outbound authentication. `type` defaults to the
  // seed's destination; mappings, auth and tls are JSON, their secrets sealed like the other credentials.
  '0020_actions_destinations': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('destinations').addColumn('type', 'text', (c) => c.notNull().defaultTo('webhooks')).execute();
      await db.schema.alterTable('destinations').addColumn('mappings', 'text').execute();
      await db.schema.alterTable('destinations').addColumn('auth', 'text').execute();
      await db.schema.alterTable('destinations').addColumn('tls', 'text').execute();
    },
  },
  // The limiter's slots in microseconds, so a limit above 1,000/s spaces sends 1/N s apart
  // instead of a whole millisecond. A row in use carries over: its next slot and last send, ×1,000.
  '0022_rate_slots_us': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('destination_rates').addColumn('next_slot_us', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('destination_rates').addColumn('last_send_us', 'bigint').execute();
      await db
        .updateTable('destination_rates')
        .set({ next_slot_us: sql`next_slot_ms * 1000`, last_send_us: sql`last_send_ms * 1000` })
        .execute();
      await db.schema.alterTable('destination_rates').dropColumn('next_slot_ms').execute();
      await db.schema.alterTable('destination_rates').dropColumn('last_send_ms').execute();
    },
  },
  // PostgreSQL only: a source made, renamed or deleted NOTIFYs once per statement, with
  // no payload, so every API reads its write-key directory again (write-key-directory.ts) and a
  // deleted source's key stops working on every process at once. SQLite has no one to tell.
  '0023_source_notifications': {
    async up(db: Kysely<any>) {
      if (dialectOf(db) !== 'postgres') return;
      await sql`
        create function switchyard_notify_source() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${sql.lit(SOURCE_CHANNEL)}, '');
          return null;
        end $$`.execute(db);
      await sql`create trigger sources_notify after insert or update or delete on sources for each statement execute function switchyard_notify_source()`.execute(db);
    },
  },
  // A retention path for the append-only audit log. An UPDATE is still refused
  // always; a DELETE only of a row younger than AUDIT_LOG_KEPT_AT_LEAST_DAYS, so AUDIT_RETENTION can
  // prune old rows but nothing (a bug, a stolen database login) can erase recent history. `at` is
  // ISO-8601 UTC with milliseconds, so a text comparison orders it.
  '0024_audit_retention_floor': {
    async up(db: Kysely<any>) {
      const days = sql.lit(AUDIT_LOG_KEPT_AT_LEAST_DAYS);
      if (dialectOf(db) === 'postgres') {
        await sql`
          create or replace function switchyard_audit_append_only() returns trigger language plpgsql as $$
          begin
            if tg_op = 'DELETE' and old.at < to_char((now() at time zone 'utc') - make_interval(days => ${days}), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') then
              return old;
            end if;
            raise exception 'audit_log is append-only';
          end $$`.execute(db);
      } else {
        await sql`drop trigger audit_log_no_delete`.execute(db);
        await sql`create trigger audit_log_no_delete before delete on audit_log when old.at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${sql.lit(`-${AUDIT_LOG_KEPT_AT_LEAST_DAYS} days`)}) begin select raise(abort, 'audit_log is append-only'); end`.execute(db);
      }
    },
  },
  // Operational endpoints, where Switchyard sends its own events (a message given up
  // on, a URL switched off). The Standard Webhooks secret is sealed like a destination's (bound to
  // the endpoint's id), under the key named in secret_key_id; null secret_key_id: stored as given
  // (PAYLOAD_ENCRYPTION=off). Both dialects: plain columns only.
  '0025_operational_endpoints': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('operational_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('event_types', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('secret_key_id', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  // A destination's switch for sending the message's trace context (traceparent,
  // tracestate) to its receivers; on by default, so existing destinations propagate once tracing is on.
  '0026_propagate_trace_context': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('destinations').addColumn('propagate_trace_context', 'integer', (c) => c.notNull().defaultTo(1)).execute();
    },
  },
  // Tracking plans in Segment's shapes, the schema controls of each source, violations
  // counted per minute, and each archived message's verdict (blocked ones are replayed from it).
  // `revision` is bumped by every change of a plan or its rules: the API's compiled copy is keyed by it.
  '0027_tracking_plans': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tracking_plans')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('revision', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('tracking_plan_rules')
        .addColumn('plan_id', 'text', (c) => c.notNull().references('tracking_plans.id').onDelete('cascade'))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('json_schema', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('tracking_plan_rules_pk', ['plan_id', 'type', 'key', 'version'])
        .execute();
      // The primary key on the source is the rule "a source has at most one plan".
      await db.schema
        .createTable('tracking_plan_sources')
        .addColumn('source_id', 'text', (c) => c.primaryKey().references('sources.id').onDelete('cascade'))
        .addColumn('plan_id', 'text', (c) => c.notNull().references('tracking_plans.id').onDelete('cascade'))
        .addColumn('connected_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tracking_plan_sources_plan').on('tracking_plan_sources').column('plan_id').execute();
      await db.schema
        .createTable('source_schema_settings')
        .addColumn('source_id', 'text', (c) => c.primaryKey().references('sources.id').onDelete('cascade'))
        .addColumn('settings', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('tracking_plan_violations')
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('minute', 'integer', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('event_name', 'text', (c) => c.notNull())
        .addColumn('field', 'text', (c) => c.notNull())
        .addColumn('violation_type', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('first_seen_at', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'text', (c) => c.notNull())
        .addColumn('last_message_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('tracking_plan_violations_pk', ['source_id', 'minute', 'event_type', 'event_name', 'field', 'violation_type'])
        .execute();
      await db.schema.createIndex('tracking_plan_violations_minute').on('tracking_plan_violations').column('minute').execute();
      // On PostgreSQL the column reaches every day partition through the partitioned parent.
      await db.schema.alterTable(ARCHIVE_TABLE).addColumn('plan_status', 'text').execute();
    },
  },
  // Blocked-only replays (recovery) and the two counts they add. Such a replay has
  // no one destination: its destination_id is '' (the column is NOT NULL since 0019, which SQLite
  // cannot drop without rebuilding the table); store/replays.ts reads '' as null.
  '0028_blocked_only_replays': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('replays').addColumn('blocked_only', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('replays').addColumn('skipped_blocked', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('replays').addColumn('skipped_duplicate', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  },
  // A source moved from Segment keeps its identity: its slug, its labels ([{key, value, description?}]
  // as JSON text) and the Segment id an import matches it by (unique when set).
  '0035_segment_sources': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('sources').addColumn('slug', 'text').execute();
      await db.schema.alterTable('sources').addColumn('labels', 'text', (c) => c.notNull().defaultTo('[]')).execute();
      await db.schema.alterTable('sources').addColumn('segment_id', 'text').execute();
      await db.schema.createIndex('sources_segment_id').unique().on('sources').column('segment_id').execute();
    },
  },
  // What a Segment workspace import made, by Segment id: a second import updates instead of duplicating.
  '0036_segment_imports': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('segment_imports')
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('segment_id', 'text', (c) => c.notNull())
        .addColumn('switchyard_id', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('imported_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('segment_imports_pk', ['kind', 'segment_id'])
        .execute();
    },
  },
  // Functions in Segment's shape: a function is a class with settings definitions; every save of new
  // code is a new version (never rewritten), and instances run the deployed one. Both dialects:
  // plain columns only; a function's versions go with it.
  '0032_functions': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('functions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('resource_type', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('logo_url', 'text')
        .addColumn('settings', 'text', (c) => c.notNull())
        .addColumn('latest_version', 'integer', (c) => c.notNull())
        .addColumn('deployed_version', 'integer')
        .addColumn('deployed_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('function_versions')
        .addColumn('function_id', 'text', (c) => c.notNull().references('functions.id').onDelete('cascade'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('function_versions_pk', ['function_id', 'version'])
        .execute();
    },
  },
  // Protocols Transformations in Segment's shape: one source each, scoped to the whole source
  // (destination_metadata_id null) or to one catalog entry; what they do as the API's JSON.
  '0037_transformations': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('transformations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id').onDelete('cascade'))
        .addColumn('destination_metadata_id', 'text')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('rules', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('transformations_source_id').on('transformations').columns(['source_id', 'created_at']).execute();
    },
  },
  // A destination function: the function a destination runs and its instance's settings (JSON, sealed
  // whole like the outbound auth: sensitive values among them). No foreign key: a function deleted
  // while a destination runs it fails that destination's deliveries with the reason, not silently.
  '0038_function_destinations': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('destinations').addColumn('function_id', 'text').execute();
      await db.schema.alterTable('destinations').addColumn('function_settings', 'text').execute();
    },
  },
  // Which users (as their keyed id hashes) a source's violation rows of a minute counted, so a
  // DELETE regulation can drop those minutes' rows; kept as long as the rows (the same prune).
  '0039_violation_users': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tracking_plan_violation_users')
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('minute', 'integer', (c) => c.notNull())
        .addColumn('user_hash', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('tracking_plan_violation_users_pk', ['source_id', 'minute', 'user_hash'])
        .execute();
      await db.schema.createIndex('tracking_plan_violation_users_hash').on('tracking_plan_violation_users').column('user_hash').execute();
      await db.schema.createIndex('tracking_plan_violation_users_minute').on('tracking_plan_violation_users').column('minute').execute();
    },
  },
  // An insert function instance: at most one per destination, so it lives on the destination's row
  // (one read per attempt, as before): its id (looked up by the admin API), what it runs as JSON
  // (function, name, switch, times), and its settings, sealed whole like a destination function's.
  '0040_insert_function_instances': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('destinations').addColumn('insert_function_instance_id', 'text').execute();
      await db.schema.alterTable('destinations').addColumn('insert_function', 'text').execute();
      await db.schema.alterTable('destinations').addColumn('insert_function_settings', 'text').execute();
      await db.schema.createIndex('destinations_insert_function_instance_id').on('destinations').column('insert_function_instance_id').execute();
    },
  },
  // A source function: the function a source runs for its webhook and the instance's settings
  // (JSON); and the requests whose run failed for good, listed with their error. A failed request's
  // raw request and error are user data: `detail` holds them sealed (under the request's own data
  // key) when payload keys are on. They go with their source.
  '0041_source_functions': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('sources').addColumn('function_id', 'text').execute();
      await db.schema.alterTable('sources').addColumn('function_settings', 'text').execute();
      await db.schema
        .createTable('function_requests')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id').onDelete('cascade'))
        .addColumn('function_id', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('received_at', 'text', (c) => c.notNull())
        .addColumn('failed_at', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('detail', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('function_requests_source').on('function_requests').columns(['source_id', 'failed_at']).execute();
    },
  },
  // PostgreSQL only: an operational endpoint made, changed or deleted NOTIFYs once per statement,
  // with no payload, so every process reads its copy of the endpoints again
  // (operational-endpoint-copy.ts) instead of reading the table on every raised event. SQLite has
  // no one to tell: another process's copy is read again once it is a second old.
  '0042_operational_endpoint_notifications': {
    async up(db: Kysely<any>) {
      if (dialectOf(db) !== 'postgres') return;
      await sql`
        create function switchyard_notify_operational_endpoint() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${sql.lit(OPERATIONAL_ENDPOINT_CHANNEL)}, '');
          return null;
        end $$`.execute(db);
      await sql`create trigger operational_endpoints_notify after insert or update or delete on operational_endpoints for each statement execute function switchyard_notify_operational_endpoint()`.execute(db);
    },
  },
  // Each ingested call's one decision per destination (sent, or the stop reason), kept as long as the archive for
  // "what happened to one event": plaintext columns that name no user (ids as keyed hashes, the
  // event name too) and the ids and event name sealed under the call's data key. Newest first by
  // time; searched by destination, by user hash and by event hash.
  '0043_message_fates': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('message_fates')
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text', (c) => c.notNull())
        .addColumn('destination_id', 'text', (c) => c.notNull())
        .addColumn('received_at', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('decision', 'text', (c) => c.notNull())
        .addColumn('filter_id', 'text')
        .addColumn('user_hash', 'text')
        .addColumn('anonymous_hash', 'text')
        .addColumn('event_hash', 'text')
        .addColumn('summary', 'text')
        .addPrimaryKeyConstraint('message_fates_pk', ['source_id', 'message_id', 'destination_id'])
        .execute();
      await db.schema.createIndex('message_fates_received').on('message_fates').columns(['received_at', 'message_id', 'destination_id']).execute();
      await db.schema.createIndex('message_fates_destination').on('message_fates').columns(['destination_id', 'received_at']).execute();
      await db.schema.createIndex('message_fates_user').on('message_fates').columns(['user_hash', 'received_at']).execute();
      await db.schema.createIndex('message_fates_anonymous').on('message_fates').columns(['anonymous_hash', 'received_at']).execute();
      await db.schema.createIndex('message_fates_event').on('message_fates').columns(['event_hash', 'received_at']).execute();
    },
  },
};

/** The archive's table (see message-archive-table.ts): partitioned by day on PostgreSQL, which the schema builder cannot say. */
async function createMessageArchive(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`
      create table message_archive (
        source_id text not null,
        day integer not null,
        received_at text not null,
        message_id text not null,
        type text not null,
        user_hash text,
        anonymous_hash text,
        body text not null,
        primary key (source_id, day, message_id)
      ) partition by list (day)`.execute(db);
  } else {
    await db.schema
      .createTable(ARCHIVE_TABLE)
      .addColumn('source_id', 'text', (c) => c.notNull())
      .addColumn('day', 'integer', (c) => c.notNull())
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('user_hash', 'text')
      .addColumn('anonymous_hash', 'text')
      .addColumn('body', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('message_archive_pk', ['source_id', 'day', 'message_id'])
      .execute();
    // SQLite's retention is a range delete by receivedAt.
    await db.schema.createIndex('message_archive_received_at').on(ARCHIVE_TABLE).column('received_at').execute();
  }
  await db.schema.createIndex('message_archive_page').on(ARCHIVE_TABLE).columns(['source_id', 'received_at', 'message_id']).execute();
}

/** Exported for the upgrade tests, which migrate a database to a shipped name before the latest. */
export const migrationProvider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Kysely's record of applied migrations. */
const MIGRATION_TABLE = 'kysely_migration';

/** The store's schema is not the one this version needs; the message names the fix. */
export class StoreSchemaError extends Error {}

/**
 * Start-up's schema check: a store migrated by a newer version stops the start; one missing
 * migrations is migrated (`migrate`, DATABASE_MIGRATE=on) or stops it, naming `npm run migrate`.
 * `store` names the store in the message (a redacted URL or the SQLite path).
 */
export async function ensureSchema(db: Kysely<Tables>, options: { migrate: boolean; store: string }): Promise<void> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  const applied = tables.some((t) => t.name === MIGRATION_TABLE)
    ? (await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(db)).rows.map((r) => r.name)
    : [];
  const problems = schemaProblems(Object.keys(MIGRATIONS), applied);
  const refusal = schemaProblemMessage(options.store, problems, options.migrate);
  if (refusal) throw new StoreSchemaError(refusal);
  if (problems.pending.length > 0) await migrateToLatest(db);
}

/**
 * The API and the worker both migrate when they open the store, possibly at the same moment.
 * PostgreSQL: Kysely's Postgres adapter takes an advisory lock around the run, and DDL is
 * transactional. SQLite: Kysely's SQLite adapter takes no lock, so the whole run happens inside
 * BEGIN IMMEDIATE: the second process waits (busy_timeout) for the first, then finds nothing to
 * do; SQLite DDL is transactional too, so a failed migration leaves nothing half-applied.
 */
export async function migrateToLatest(db: Kysely<Tables>): Promise<void> {
  if (dialectOf(db) === 'postgres') return migrate(db);
  await db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      await migrate(connection);
      await sql`commit`.execute(connection);
    } catch (err) {
      await sql`rollback`.execute(connection);
      throw err;
    }
  });
}

async function migrate(db: Kysely<Tables>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'migration table set-up';
    throw new Error(`store migration failed at ${failed}: ${(error as Error).message ?? error}`, { cause: error });
  }
}

import type { CompiledQuery, InferResult, Kysely, Selectable, Updateable } from 'kysely';
import type { Keyring } from '../privacy/keyring';
import { credentialsByMasterKey, resealCredentials } from './credentials-at-rest';
import { openedCredentials, sealedCredentials, type PlainCredentials } from './destination-credentials';
import { OpenedValues } from '../privacy/opened-values';
import { DEFAULT_CONSENT } from '../rules/consent';
import { newId } from './ids';
import type { DestinationRow, Tables } from './tables';
import type { ActionsMapping, OutboundAuth, TlsSettings } from '../mappings/types';
import type { ConsentSettings, Destination, DestinationPatch, InsertFunctionInstance, Store, Webhook, WebhookBackpressure, WebhookDisablement, WebhookSetting } from './types';
import { writeTransaction } from './write-transaction';
import { secretsKept, type SecretsReach } from '../mappings/url-bound-secrets';

/** The integration's name in the seed; used when a destination is created without one. */
const DEFAULT_NAME = 'Webhooks';

/** The reason recorded when an operator switches a URL off through the admin API. */
export const SWITCHED_OFF_BY_OPERATOR = 'switched off through the admin API';

/** A destination without consent settings needs no category and delivers events without preferences (Segment's default). */

function toConsent(stored: string | null): ConsentSettings {
  return stored === null ? { ...DEFAULT_CONSENT, categories: [] } : { ...DEFAULT_CONSENT, ...(JSON.parse(stored) as Partial<ConsentSettings>) };
}

/** The settings a create or patch leaves: the given fields over `current`; the default is stored as null. */
function storedConsent(current: ConsentSettings, given: Partial<ConsentSettings>): string | null {
  const consent: ConsentSettings = { categories: given.categories ?? current.categories, whenAbsent: given.whenAbsent ?? current.whenAbsent };
  return consent.categories.length === 0 && consent.whenAbsent === DEFAULT_CONSENT.whenAbsent ? null : JSON.stringify(consent);
}

/** Destinations whose opened credentials a store keeps (a worker's attempts go to a few hundred at most). */
export const OPENED_DESTINATIONS = 1_000;

/** Everything a row's credentials are opened from: any change to one of them (or to the key that sealed them) opens them again. */
const sealedText = (row: Selectable<DestinationRow>): string =>
  JSON.stringify({ k: row.credentials_key_id, s: row.shared_secret, g: row.signing_secret, p: row.previous_signing_secret, w: row.webhooks, m: row.mappings, a: row.auth, t: row.tls, f: row.function_settings, i: row.insert_function_settings });

/** One destination with its URLs' switch-offs and backpressure, both per-URL tables joined: at most 5 × 5 rows for a destination's 5 URLs. */
const destinationById = (db: Kysely<Tables>, id: string) =>
  db
    .selectFrom('destinations')
    .leftJoin('disabled_webhooks', 'disabled_webhooks.destination_id', 'destinations.id')
    .leftJoin('webhook_backpressure', 'webhook_backpressure.destination_id', 'destinations.id')
    .selectAll('destinations')
    .select(['disabled_webhooks.url as disabled_url', 'disabled_webhooks.reason as disabled_reason', 'disabled_webhooks.disabled_at'])
    .select(['webhook_backpressure.url as pressed_url', 'webhook_backpressure.until_ms as pressed_until_ms', 'webhook_backpressure.reason as pressed_reason'])
    .where('destinations.id', '=', id);
type DestinationWithWebhookRows = InferResult<ReturnType<typeof destinationById>>[number];

/** Disabled URLs of some destinations: destination id → url → why. */
type Disabled = Map<string, Map<string, WebhookDisablement>>;
/** URLs that asked for backpressure: destination id → url → until when. */
type Backpressured = Map<string, Map<string, WebhookBackpressure>>;

function toDestination(row: Selectable<DestinationRow>, disabled: Disabled, backpressured: Backpressured = new Map()): Destination {
  const off = disabled.get(row.id);
  const pressed = backpressured.get(row.id);
  const webhooks = (JSON.parse(row.webhooks) as Webhook[]).map((webhook) => {
    const disablement = off?.get(webhook.url);
    const backpressure = pressed?.get(webhook.url);
    return { ...webhook, ...(disablement && { disabled: disablement }), ...(backpressure && { backpressure }) };
  });
  const mappings = row.mappings ? (JSON.parse(row.mappings) as ActionsMapping[]) : [];
  // A mapping URL's pause is in the same per-URL table as a webhook's.
  const mappingBackpressure = Object.fromEntries(mappings.flatMap((mapping) => (pressed?.has(mapping.settings.url) ? [[mapping.name, pressed.get(mapping.settings.url)!]] : [])));
  return {
    id: row.id,
    sourceId: row.source_id,
    name: row.name,
    enabled: row.enabled === 1,
    sharedSecret: row.shared_secret,
    signing: row.signing_secret
      ? {
          current: row.signing_secret,
          ...(row.previous_signing_secret && row.previous_signing_secret_until && { previous: { secret: row.previous_signing_secret, until: row.previous_signing_secret_until } }),
        }
      : null,
    webhooks,
    maxRequestsPerSecond: row.max_requests_per_second === null ? null : Number(row.max_requests_per_second),
    paused: row.paused === 1,
    ...(row.paused === 1 && row.paused_at && { pausedAt: row.paused_at }),
    consent: toConsent(row.consent),
    type: row.type === 'actions' || row.type === 'function' ? row.type : 'webhooks',
    mappings,
    function: row.type === 'function' && row.function_id ? { functionId: row.function_id, settings: row.function_settings ? (JSON.parse(row.function_settings) as Record<string, unknown>) : {} } : null,
    ...(row.insert_function_instance_id && { insertFunction: toInsertFunction(row) }),
    ...(Object.keys(mappingBackpressure).length > 0 && { mappingBackpressure }),
    auth: row.auth ? (JSON.parse(row.auth) as OutboundAuth) : null,
    tls: row.tls ? (JSON.parse(row.tls) as TlsSettings) : null,
    // Rows from before the column read as on, its default.
    propagateTraceContext: row.propagate_trace_context !== 0,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** What the `insert_function` column keeps of an instance: all but its id (a column of its own) and its settings (sealed). */
type InsertFunctionHead = Omit<InsertFunctionInstance, 'id' | 'settings'>;

/** A destination's insert function instance from its columns, or undefined when it has none. */
function toInsertFunction(row: Pick<DestinationRow, 'insert_function_instance_id' | 'insert_function' | 'insert_function_settings'>): InsertFunctionInstance | undefined {
  if (!row.insert_function_instance_id || !row.insert_function) return undefined;
  const head = JSON.parse(row.insert_function) as InsertFunctionHead;
  return { id: row.insert_function_instance_id, ...head, settings: row.insert_function_settings ? (JSON.parse(row.insert_function_settings) as Record<string, unknown>) : {} };
}

/** The columns an instance is written as (all null: detached). */
function insertFunctionColumns(instance: InsertFunctionInstance | null): Pick<DestinationRow, 'insert_function_instance_id' | 'insert_function' | 'insert_function_settings'> {
  if (!instance) return { insert_function_instance_id: null, insert_function: null, insert_function_settings: null };
  const { id, settings, ...head } = instance;
  return { insert_function_instance_id: id, insert_function: JSON.stringify(head), insert_function_settings: JSON.stringify(settings) };
}

/** A second insert function instance for a destination that has one: the admin API answers 409. */
export class InsertFunctionTaken extends Error {
  constructor(readonly destinationId: string, readonly instanceId: string) {
    super(`destination ${destinationId} already has insert function instance ${instanceId}`);
  }
}

/** Seed: an empty shared secret means "do not sign", the same as none; keep one spelling of it. */
function storedSecret(sharedSecret: string | null | undefined): string | null {
  return sharedSecret ? sharedSecret : null;
}

function storedWebhooks(webhooks: Webhook[]): string {
  return JSON.stringify(webhooks.map(({ url, headers }) => ({ url, headers: headers ?? {} })));
}

/** An actions destination's switched-on mappings, with what the planner reads of them. */
function enabledMappings(row: Pick<DestinationRow, 'type' | 'mappings'>): Pick<ActionsMapping, 'name' | 'trigger'>[] {
  if (row.type !== 'actions' || !row.mappings) return [];
  return (JSON.parse(row.mappings) as ActionsMapping[]).filter((mapping) => mapping.enabled).map(({ name, trigger }) => ({ name, trigger }));
}

/** Nothing is delivered through a destination without a URL (or, for an actions destination, a mapping) that is switched on, however it is switched. */
function isDeliverable(row: Pick<DestinationRow, 'id' | 'enabled' | 'webhooks' | 'type' | 'mappings'>, disabled: Disabled): boolean {
  const off = disabled.get(row.id);
  if (row.type === 'actions') return row.enabled === 1 && enabledMappings(row).length > 0;
  // A destination function has no URL of its own: its handler's requests are the attempt.
  if (row.type === 'function') return row.enabled === 1;
  return row.enabled === 1 && (JSON.parse(row.webhooks) as Webhook[]).some((webhook) => !off?.has(webhook.url));
}

/** The actions destination's JSON columns as written: auth and tls null to clear, mappings only for actions destinations. */
function storedJson(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** Where a row's auth and client certificate can go (plaintext columns: an opened row, or one about to be sealed). */
function reachOf(row: Pick<DestinationRow, 'webhooks' | 'mappings' | 'auth'>): SecretsReach {
  return {
    webhookUrls: (JSON.parse(row.webhooks) as Webhook[]).map((webhook) => webhook.url),
    mappings: row.mappings ? (JSON.parse(row.mappings) as ActionsMapping[]) : [],
    auth: row.auth ? (JSON.parse(row.auth) as OutboundAuth) : null,
  };
}

/** Per-URL state rows (switched off, backpressure) as destination id → url → value. */
function byDestinationAndUrl<R extends { destination_id: string; url: string }, V>(rows: R[], value: (row: R) => V): Map<string, Map<string, V>> {
  const grouped = new Map<string, Map<string, V>>();
  for (const row of rows) {
    if (!grouped.has(row.destination_id)) grouped.set(row.destination_id, new Map());
    grouped.get(row.destination_id)!.set(row.url, value(row));
  }
  return grouped;
}

async function backpressuredOf(db: Kysely<Tables>, destinationIds: string[]): Promise<Backpressured> {
  if (destinationIds.length === 0) return new Map();
  const rows = await db.selectFrom('webhook_backpressure').selectAll().where('destination_id', 'in', destinationIds).execute();
  return byDestinationAndUrl(rows, (row) => ({ untilMs: Number(row.until_ms), reason: row.reason }));
}

async function disabledOf(db: Kysely<Tables>, destinationIds: string[]): Promise<Disabled> {
  if (destinationIds.length === 0) return new Map();
  const rows = await db.selectFrom('disabled_webhooks').selectAll().where('destination_id', 'in', destinationIds).execute();
  return byDestinationAndUrl(rows, (row) => ({ reason: row.reason, at: row.disabled_at }));
}

/**
 * Applies the `enabled` of each configured webhook and forgets the state of URLs no longer listed.
 * An entry without `enabled` keeps its URL's state, so re-sending the list does not undo a 410.
 */
async function applyWebhookSettings(db: Kysely<Tables>, destinationId: string, webhooks: WebhookSetting[], now: string): Promise<void> {
  const urls = webhooks.map((w) => w.url);
  let forget = db.deleteFrom('disabled_webhooks').where('destination_id', '=', destinationId);
  if (urls.length > 0) forget = forget.where('url', 'not in', urls);
  await forget.execute();
  for (const { url, enabled } of webhooks) {
    if (enabled === true) {
      await db.deleteFrom('disabled_webhooks').where('destination_id', '=', destinationId).where('url', '=', url).execute();
    } else if (enabled === false) {
      await db
        .insertInto('disabled_webhooks')
        .values({ destination_id: destinationId, url, reason: SWITCHED_OFF_BY_OPERATOR, disabled_at: now })
        .onConflict((c) => c.columns(['destination_id', 'url']).doNothing())
        .execute();
    }
  }
}

/** No previous signing secret: it is never kept past its overlap, only while it signs. */
const NO_PREVIOUS_SIGNING_SECRET = { previous_signing_secret: null, previous_signing_secret_until: null } as const;

const overlapEnded = (until: string | null, nowMs: number) => until !== null && Date.parse(until) <= nowMs;

/**
 * A new signing secret replaces the current one; the replaced one keeps signing for the overlap,
 * so receivers can move to the new secret without rejecting a single request. A previous secret
 * whose overlap has ended leaves the row with any write (and with dropEndedSigningOverlaps).
 */
function signingChanges(current: Pick<DestinationRow, 'signing_secret' | 'previous_signing_secret_until'>, patch: DestinationPatch, now: Date): Updateable<DestinationRow> {
  const ended = overlapEnded(current.previous_signing_secret_until, now.getTime()) ? NO_PREVIOUS_SIGNING_SECRET : {};
  if (patch.signingSecret === undefined) return ended;
  const next = storedSecret(patch.signingSecret);
  if (next === current.signing_secret) return ended;
  const overlapMs = patch.signingSecretOverlapMs ?? 0;
  if (next === null || current.signing_secret === null || overlapMs <= 0) return { signing_secret: next, ...NO_PREVIOUS_SIGNING_SECRET };
  return {
    signing_secret: next,
    previous_signing_secret: current.signing_secret,
    previous_signing_secret_until: new Date(now.getTime() + overlapMs).toISOString(),
  };
}

/**
 * `keyring` seals the receiver credentials of every row written and opens those read;
 * undefined with PAYLOAD_ENCRYPTION=off: written as given, and a sealed row does not open.
 */
export function destinationStore(db: Kysely<Tables>, keyring: Keyring | undefined, credentials = new OpenedValues<PlainCredentials>(OPENED_DESTINATIONS)): Store['destinations'] {
  // Every attempt reads its destination; its credentials are opened again only when the row's sealed
  // text changed. `credentials` is the store's (openStore): a delete NOTIFYd by another process forgets there too.
  // Every attempt runs this read: built and compiled once (on first use), then run with each id.
  // Building it with Kysely was about 19 µs of the read's 45 µs (CPU, measured on SQLite).
  let byId: CompiledQuery<DestinationWithWebhookRows> | undefined;
  const opened = <R extends Selectable<DestinationRow>>(row: R): R => ({ ...row, ...credentials.open(row.id, sealedText(row), () => openedCredentials(keyring, row)) });
  const listEnabled: Store['destinations']['listEnabled'] = async (sourceId) => {
    // A function destination's function is read with it: its display name is the destination's integrations key.
    const rows = await db
      .selectFrom('destinations')
      .leftJoin('functions', 'functions.id', 'destinations.function_id')
      .select(['destinations.id', 'destinations.enabled', 'destinations.webhooks', 'destinations.consent', 'destinations.type', 'destinations.mappings', 'destinations.function_id', 'functions.display_name'])
      .where('destinations.source_id', '=', sourceId)
      .where('destinations.enabled', '=', 1)
      .orderBy('destinations.created_at')
      .orderBy('destinations.id')
      .execute();
    const disabled = await disabledOf(db, rows.map((row) => row.id));
    return rows
      .filter((row) => isDeliverable(row, disabled))
      .map((row) => ({
        id: row.id,
        webhookUrls: (JSON.parse(row.webhooks) as Webhook[]).map((webhook) => webhook.url),
        consent: toConsent(row.consent),
        ...(row.type === 'actions' && { mappings: enabledMappings(row) }),
        ...(row.type === 'function' && row.function_id !== null && { function: { functionId: row.function_id, displayName: row.display_name ?? row.function_id } }),
      }));
  };

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
        signing_secret: storedSecret(input.signingSecret),
        previous_signing_secret: null,
        previous_signing_secret_until: null,
        max_requests_per_second: input.maxRequestsPerSecond ?? null,
        paused: input.paused ? 1 : 0,
        paused_at: input.paused ? now : null,
        propagate_trace_context: input.propagateTraceContext === false ? 0 : 1,
        credentials_key_id: null,
        consent: storedConsent(DEFAULT_CONSENT, input.consent ?? {}),
        type: input.type ?? 'webhooks',
        mappings: input.type === 'actions' ? storedJson(input.mappings ?? []) : null,
        auth: storedJson(input.auth),
        tls: storedJson(input.tls),
        function_id: input.type === 'function' ? (input.function?.functionId ?? null) : null,
        function_settings: input.type === 'function' ? storedJson(input.function?.settings ?? {}) : null,
        ...insertFunctionColumns(null),
      };
      return writeTransaction(db, async (trx) => {
        await trx.insertInto('destinations').values({ ...row, ...sealedCredentials(keyring, row.id, row) }).execute();
        await applyWebhookSettings(trx, row.id, input.webhooks, now);
        return toDestination(row, await disabledOf(trx, [row.id]));
      });
    },

    async get(id) {
      // One statement, not two (destinationById): every attempt calls this, and on PostgreSQL each is a round trip.
      const { rows } = await db.executeQuery<DestinationWithWebhookRows>({ ...(byId ??= destinationById(db, '').compile()), parameters: [id] });
      if (rows.length === 0) return undefined;
      const off = new Map<string, WebhookDisablement>();
      const pressed = new Map<string, WebhookBackpressure>();
      for (const row of rows) {
        if (row.disabled_url !== null) off.set(row.disabled_url, { reason: row.disabled_reason!, at: row.disabled_at! });
        if (row.pressed_url !== null) pressed.set(row.pressed_url, { untilMs: Number(row.pressed_until_ms), reason: row.pressed_reason! });
      }
      const { disabled_url: _url, disabled_reason: _reason, disabled_at: _at, pressed_url: _purl, pressed_until_ms: _until, pressed_reason: _preason, ...row } = rows[0];
      return toDestination(opened(row), new Map([[id, off]]), new Map([[id, pressed]]));
    },

    async update(id, patch) {
      return writeTransaction(db, async (trx) => {
        const stored = await trx.selectFrom('destinations').selectAll().where('id', '=', id).executeTakeFirst();
        if (!stored) return undefined;
        const current = opened(stored);
        const now = new Date();
        const changes: Updateable<DestinationRow> = { updated_at: now.toISOString(), ...signingChanges(current, patch, now) };
        if (patch.name !== undefined) changes.name = patch.name;
        if (patch.enabled !== undefined) changes.enabled = patch.enabled ? 1 : 0;
        if (patch.sharedSecret !== undefined) changes.shared_secret = storedSecret(patch.sharedSecret);
        if (patch.webhooks !== undefined) changes.webhooks = storedWebhooks(patch.webhooks);
        if (patch.maxRequestsPerSecond !== undefined) changes.max_requests_per_second = patch.maxRequestsPerSecond;
        if (patch.consent !== undefined) changes.consent = storedConsent(toConsent(current.consent), patch.consent);
        if (patch.mappings !== undefined && current.type === 'actions') changes.mappings = storedJson(patch.mappings);
        if (patch.auth !== undefined) changes.auth = storedJson(patch.auth);
        if (patch.tls !== undefined) changes.tls = storedJson(patch.tls);
        if (patch.function !== undefined && current.type === 'function') changes.function_settings = storedJson(patch.function.settings);
        if (patch.propagateTraceContext !== undefined) changes.propagate_trace_context = patch.propagateTraceContext ? 1 : 0;
        // At most one insert function instance per destination: attaching another is refused,
        // and the write below only lands while none is attached (two attaches at once: one wins).
        const attachedId = current.insert_function_instance_id;
        const attaching = patch.insertFunction ? patch.insertFunction.id !== attachedId : false;
        if (attaching && attachedId) throw new InsertFunctionTaken(id, attachedId);
        if (patch.insertFunction !== undefined) Object.assign(changes, insertFunctionColumns(patch.insertFunction));
        // Pausing again keeps the first time: it is when the hold began.
        if (patch.paused !== undefined && patch.paused !== (current.paused === 1)) {
          changes.paused = patch.paused ? 1 : 0;
          changes.paused_at = patch.paused ? now.toISOString() : null;
        }
        // Secrets set for the old URLs do not follow the destination to a new one, unless given again.
        const kept = secretsKept(reachOf(current), reachOf({ ...current, ...changes }), { auth: patch.auth !== undefined, tls: patch.tls !== undefined });
        if (kept.dropAuth) changes.auth = null;
        if (kept.dropTls) changes.tls = null;
        // Every write seals the whole row again under the active key: one key id per row.
        const sealed = sealedCredentials(keyring, id, { ...current, ...changes });
        let update = trx.updateTable('destinations').set({ ...changes, ...sealed }).where('id', '=', id);
        if (attaching) update = update.where('insert_function_instance_id', 'is', null);
        const row = await update.returningAll().executeTakeFirst();
        if (!row) throw new InsertFunctionTaken(id, 'attached meanwhile');
        // A new rate limit starts a new queue: slots handed out under the old one no longer
        // push new asks back (the admin API wakes their holders, who ask again under the new limit).
        // The last send stays, so the new spacing holds from it.
        if (patch.maxRequestsPerSecond !== undefined && patch.maxRequestsPerSecond !== current.max_requests_per_second) {
          await trx.updateTable('destination_rates').set({ next_slot_us: 0 }).where('destination_id', '=', id).execute();
        }
        if (patch.webhooks !== undefined) await applyWebhookSettings(trx, id, patch.webhooks, now.toISOString());
        return toDestination(opened(row), await disabledOf(trx, [id]), await backpressuredOf(trx, [id]));
      });
    },

    async delete(id) {
      credentials.forget([id]);
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
      const ids = rows.map((row) => row.id);
      const [disabled, backpressured] = [await disabledOf(db, ids), await backpressuredOf(db, ids)];
      return rows.map((row) => toDestination(opened(row), disabled, backpressured));
    },

    async listWithInsertFunction(functionId) {
      const rows = await db.selectFrom('destinations').selectAll().where('insert_function_instance_id', 'is not', null).orderBy('id').execute();
      const destinations = rows.map((row) => toDestination(opened(row), new Map()));
      const found = destinations.filter((d) => functionId === undefined || d.insertFunction?.functionId === functionId);
      return found.sort((a, b) => (a.insertFunction!.createdAt < b.insertFunction!.createdAt ? -1 : a.insertFunction!.createdAt > b.insertFunction!.createdAt ? 1 : 0));
    },

    async getByInsertFunction(instanceId) {
      const row = await db.selectFrom('destinations').selectAll().where('insert_function_instance_id', '=', instanceId).executeTakeFirst();
      if (!row) return undefined;
      return toDestination(opened(row), await disabledOf(db, [row.id]), await backpressuredOf(db, [row.id]));
    },

    async listEnabledIds(sourceId) {
      return (await listEnabled(sourceId)).map((destination) => destination.id);
    },

    listEnabled,

    async listSourceIdsWithEnabled() {
      const rows = await db
        .selectFrom('destinations')
        .select(['id', 'source_id', 'enabled', 'webhooks', 'type', 'mappings'])
        .where('enabled', '=', 1)
        .execute();
      const disabled = await disabledOf(db, rows.map((row) => row.id));
      // Sorted by code point here, the same on both dialects whatever PostgreSQL's collation.
      return [...new Set(rows.filter((row) => isDeliverable(row, disabled)).map((row) => row.source_id))].sort();
    },

    async enableWebhook(id, url) {
      const result = await db.deleteFrom('disabled_webhooks').where('destination_id', '=', id).where('url', '=', url).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async disableWebhook(id, url, reason) {
      return writeTransaction(db, async (trx) => {
        const row = await trx.selectFrom('destinations').select('webhooks').where('id', '=', id).executeTakeFirst();
        if (!row || !(JSON.parse(row.webhooks) as Webhook[]).some((webhook) => webhook.url === url)) return false;
        await trx
          .insertInto('disabled_webhooks')
          .values({ destination_id: id, url, reason, disabled_at: new Date().toISOString() })
          .onConflict((c) => c.columns(['destination_id', 'url']).doNothing())
          .execute();
        return true;
      });
    },

    async dropEndedSigningOverlaps(nowMs) {
      const rows = await db.selectFrom('destinations').select(['id', 'previous_signing_secret_until']).where('previous_signing_secret_until', 'is not', null).execute();
      let dropped = 0;
      let nextEndMs: number | undefined;
      for (const { id, previous_signing_secret_until: until } of rows) {
        if (!overlapEnded(until, nowMs)) {
          nextEndMs = Math.min(nextEndMs ?? Infinity, Date.parse(until!));
          continue;
        }
        // Only the overlap as read: a rotation meanwhile started a new one, which stays.
        const result = await db.updateTable('destinations').set(NO_PREVIOUS_SIGNING_SECRET).where('id', '=', id).where('previous_signing_secret_until', '=', until).executeTakeFirst();
        dropped += Number(result.numUpdatedRows);
      }
      return { dropped, nextEndMs };
    },

    resealCredentials: (limit) => resealCredentials(db, requireKeyring(keyring), limit),

    credentialsByMasterKey: () => credentialsByMasterKey(db),
  };
}

function requireKeyring(keyring: Keyring | undefined): Keyring {
  if (!keyring) throw new Error('re-sealing credentials needs payload keys (PAYLOAD_KEYS); PAYLOAD_ENCRYPTION=off seals nothing');
  return keyring;
}

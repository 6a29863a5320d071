import type { LatencyColumn } from './webhook-health-columns';

/**
 * The SQL shape of the store, as Kysely sees it. Only src/store reads these rows; everything
 * else gets the domain records of ./types. Column types stay portable (text and integer, JSON as
 * text) so a Postgres dialect can later run the same migrations and queries.
 */

export interface SourceRow {
  id: string;
  name: string;
  /** SHA-256 (hex) of the write key: the key itself is never stored. */
  write_key_hash: string;
  write_key_hint: string;
  created_at: string;
  /** Segment's source shape: the slug and labels ([{key, value, description?}] as JSON) it came with. */
  slug?: string | null;
  labels?: string;
  /** The Segment id an import matched it by; null for a source made here. */
  segment_id?: string | null;
  /** A source function (`sfnc_…`) its webhook runs; null for an ordinary source. */
  function_id?: string | null;
  /** JSON of that instance's settings; null without a function. */
  function_settings?: string | null;
}

/** A source function's request whose run failed for good (0041_source_functions). */
export interface FunctionRequestRow {
  id: string;
  source_id: string;
  function_id: string;
  version: number;
  received_at: string;
  failed_at: string;
  /** The disposition word and the error's class (`function:error: TypeError`): what happened, no message text. */
  reason: string;
  /** JSON of {request, error}, or of the SealedBody holding it. */
  detail: string;
}

/** What a Segment import made of one Segment object (store/segment-imports.ts). */
export interface SegmentImportRow {
  kind: string;
  segment_id: string;
  switchyard_id: string;
  fingerprint: string;
  imported_at: string;
}

export interface DestinationRow {
  id: string;
  source_id: string;
  name: string;
  /** 0 or 1: SQLite has no boolean type. */
  enabled: number;
  shared_secret: string | null;
  /** JSON array of {url, headers}. */
  webhooks: string;
  created_at: string;
  updated_at: string;
  /** Standard Webhooks secret (`whsec_…`); null when the destination does not sign that way. */
  signing_secret: string | null;
  /** The secret before the last rotation, still used to sign until `previous_signing_secret_until`. */
  previous_signing_secret: string | null;
  previous_signing_secret_until: string | null;
  /** Requests per second to all of the destination's URLs together; null: no limit. */
  max_requests_per_second: number | null;
  /** 0 or 1: held (paused) deliveries wait without sending until it is 0 again. */
  paused: number;
  /** When the destination was paused; null while it is not. */
  paused_at: string | null;
  /** 0 or 1 (the default): whether requests carry `traceparent`/`tracestate`. */
  propagate_trace_context: number;
  /**
   * The payload master key the row's credentials (shared_secret, signing_secret,
   * previous_signing_secret and the header values in webhooks) are sealed under
   * (store/destination-credentials.ts); null: they are plaintext (written without keys, or before).
   */
  credentials_key_id: string | null;
  /** JSON of ConsentSettings; null: the default (no categories, deliver when absent). */
  consent: string | null;
  /** `webhooks` (the seed's) or `actions`. */
  type: string;
  /** JSON array of ActionsMapping (header values sealed like the webhooks'); null for `webhooks`. */
  mappings: string | null;
  /** JSON of OutboundAuth, sealed whole; null: none. */
  auth: string | null;
  /** JSON of TlsSettings, sealed whole; null: none. */
  tls: string | null;
  /** A `function` destination's function (`dfn_…`); null for the other kinds. */
  function_id: string | null;
  /** JSON of its instance's settings, sealed whole under credentials_key_id; null for the other kinds. */
  function_settings: string | null;
  /** Its insert function instance's id (`ifi_…`); null: none. At most one per destination. */
  insert_function_instance_id: string | null;
  /** JSON of the instance's InsertFunctionHead (function, name, switch, times); null: none. */
  insert_function: string | null;
  /** JSON of the instance's settings, sealed whole under credentials_key_id; null: none. */
  insert_function_settings: string | null;
}

/** A rate-limited destination's shared limiter state (delivery/flow-control.ts), epoch µs (0022_rate_slots_us). */
export interface DestinationRateRow {
  destination_id: string;
  /** The next free send slot (GCRA theoretical arrival time). */
  next_slot_us: number;
  /** The moment the last request was claimed for, for the check at send time. */
  last_send_us: number | null;
}

/** A URL that answered 429 or 503 with Retry-After: nothing is sent to it, by any message, until `until_ms`. */
export interface WebhookBackpressureRow {
  destination_id: string;
  url: string;
  until_ms: number;
  /** The answer that asked for it, e.g. `HTTP 429`. */
  reason: string;
}

/** A webhook URL of a destination that is switched off (e.g. it answered 410 Gone), and why. */
export interface DisabledWebhookRow {
  destination_id: string;
  url: string;
  reason: string;
  disabled_at: string;
}

export interface RegulationRow {
  id: string;
  regulation_type: string;
  subject_type: string;
  /** JSON array of strings: keyed hashes of the ids when subject_ids_hashed is 1, the ids themselves when 0 (no keys). */
  subject_ids: string;
  subject_ids_hashed: number;
  created_at: string;
}

/** A user id a source has sent at least one accepted message under (any call type): regulations notify only these sources. */
export interface SourceUserRow {
  source_id: string;
  user_id: string;
  first_seen_at: string;
  last_seen_at: string;
}

/** Another id seen with a user id in one call of a source: an anonymousId beside it, or an alias's previousId. */
export interface SourceUserLinkRow {
  source_id: string;
  user_id: string;
  linked_id: string;
  first_seen_at: string;
}

/**
 * An id a DELETE regulation erased, as SHA-256 (hex) only: attempts made after it check whether
 * their message is about an erased id, without Switchyard keeping the id itself.
 */
/** A subject's data key, wrapped under a master key (data-keys.ts); the row's deletion is the erasure. */
export interface DataKeyRow {
  subject_hash: string;
  master_key_id: string;
  /** base64 of nonce ‖ ciphertext ‖ tag (privacy/data-key-wrap.ts). */
  wrapped_key: string;
  created_at: string;
}

export interface ErasedIdRow {
  id_hash: string;
  /** When the (latest) regulation erased it: messages accepted at or before this are never sent. */
  erased_at: string;
}

/** An id a regulation suppressed, as its one-way hash like erased_ids. */
export interface SuppressedIdRow {
  id_hash: string;
  /** When the (latest) suppression began: deliveries of messages accepted up to it never send. */
  suppressed_at: string;
  /** When an UNSUPPRESS lifted it; null while it holds. */
  lifted_at: string | null;
}

/**
 * One webhook URL's attempts in one minute, added up over every worker (webhook-health.ts): each
 * worker upserts what it saw since its last flush, adding to the counts already there.
 */
export type WebhookHealthRow = {
  destination_id: string;
  url: string;
  /** Minutes since the epoch (UTC). */
  minute: number;
  successes: number;
  retry_failures: number;
  permanent_failures: number;
  /** The minute's latest failure reason, and its time as milliseconds into the minute. */
  last_error: string | null;
  last_error_ms: number | null;
  /** Time messages waited without sending, by why (ms, summed over messages). */
  throttled_ms: number;
  held_ms: number;
  backpressured_ms: number;
} & { [K in LatencyColumn]: number };

/** The overview: messages a source accepted per minute, added up over every API process. */
export interface ReceivedCountRow {
  source_id: string;
  /** Minutes since the epoch (UTC). */
  minute: number;
  count: number;
}

/** Messages a destination did not get per minute, by the first reason that stopped them ('' filter_id unless a filter). */
export interface FilteredCountRow {
  destination_id: string;
  minute: number;
  reason: string;
  filter_id: string;
  count: number;
}

/** One destination filter, as Segment's Public API takes it. */
/** A Protocols transformation (store/transformations.ts). */
export interface TransformationRow {
  id: string;
  source_id: string;
  /** Segment's catalog id of the destinations it is scoped to; null: the whole source. */
  destination_metadata_id: string | null;
  name: string;
  /** 0 or 1. */
  enabled: number;
  /** JSON of what it does: {if, drop?, newEventName?, propertyRenames?, propertyValueTransformations?, fqlDefinedProperties?, allowProperties?}, compiled again when read. */
  rules: string;
  created_at: string;
  updated_at: string;
}

export interface DestinationFilterRow {
  id: string;
  destination_id: string;
  title: string;
  description: string | null;
  /** 0 or 1. */
  enabled: number;
  /** The FQL of `if`, as written (parsed again when read: the parse is the validation). */
  condition: string;
  /** JSON array of the Public API's actions. */
  actions: string;
  created_at: string;
  updated_at: string;
}

/** An admin token, kept as its SHA-256 only (the token is shown once, at creation). */
export interface AdminTokenRow {
  id: string;
  name: string;
  /** SHA-256 (hex) of the token. */
  token_hash: string;
  /** JSON array of scope names. */
  scopes: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** One append-only row per admin change or denied attempt; names fields, never their values. */
export interface AuditRow {
  id: string;
  at: string;
  actor_token_id: string | null;
  actor_name: string | null;
  action: string;
  target: string | null;
  outcome: string;
  request_id: string;
  ip: string;
  /** JSON array of field names. */
  changed: string;
}

/** One archived message (message-archive-table.ts). */
export interface MessageArchiveRow {
  source_id: string;
  /** UTC days since the epoch: PostgreSQL's partition key. */
  day: number;
  received_at: string;
  message_id: string;
  type: string;
  user_hash: string | null;
  anonymous_hash: string | null;
  /** JSON: a SealedBody of the ArchivedCall, or the ArchivedCall in the clear. */
  body: string;
  /** The tracking plan's verdict (passed, omitted, blocked); null where no plan decided. */
  plan_status: string | null;
}

/** One replay and the progress its workflow wrote. */
export interface ReplayRow {
  id: string;
  source_id: string;
  destination_id: string;
  since: string;
  until: string;
  trigger: string | null;
  dry_run: number;
  status: string;
  matched: number;
  started: number;
  delivered: number;
  failed: number;
  skipped_erased: number;
  skipped_suppressed: number;
  skipped_filtered: number;
  /** Migration 0028: blocked-only replays and their counts. */
  blocked_only: number;
  skipped_blocked: number;
  skipped_duplicate: number;
  created_at: string;
  finished_at: string | null;
}

/** One operational endpoint (src/store/operational-endpoints.ts). */
export interface OperationalEndpointRow {
  id: string;
  url: string;
  /** JSON array of event type names; [] subscribes to every type. */
  event_types: string;
  format: string;
  /** 0 or 1. */
  enabled: number;
  /** The Standard Webhooks secret, sealed under secret_key_id (or as given when that is null). */
  secret: string;
  secret_key_id: string | null;
  created_at: string;
  updated_at: string;
}

/** A function in Segment's shape (src/store/functions.ts); its code lives in its versions. */
export interface FunctionRow {
  id: string;
  resource_type: string;
  display_name: string;
  description: string | null;
  logo_url: string | null;
  /** JSON array of setting definitions (values are an instance's). */
  settings: string;
  latest_version: number;
  /** The version instances run; null before any deploy. */
  deployed_version: number | null;
  deployed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** One saved version of a function's code; never changed once written. */
export interface FunctionVersionRow {
  function_id: string;
  version: number;
  code: string;
  created_at: string;
}

export interface Tables {
  sources: SourceRow;
  function_requests: FunctionRequestRow;
  segment_imports: SegmentImportRow;
  destinations: DestinationRow;
  disabled_webhooks: DisabledWebhookRow;
  regulations: RegulationRow;
  source_users: SourceUserRow;
  source_user_links: SourceUserLinkRow;
  erased_ids: ErasedIdRow;
  suppressed_ids: SuppressedIdRow;
  data_keys: DataKeyRow;
  webhook_health: WebhookHealthRow;
  destination_rates: DestinationRateRow;
  webhook_backpressure: WebhookBackpressureRow;
  received_counts: ReceivedCountRow;
  filtered_counts: FilteredCountRow;
  destination_filters: DestinationFilterRow;
  transformations: TransformationRow;
  admin_tokens: AdminTokenRow;
  audit_log: AuditRow;
  message_archive: MessageArchiveRow;
  message_fates: MessageFateRow;
  replays: ReplayRow;
  operational_endpoints: OperationalEndpointRow;
  functions: FunctionRow;
  function_versions: FunctionVersionRow;
  tracking_plans: TrackingPlanRow;
  tracking_plan_rules: TrackingPlanRuleRow;
  tracking_plan_sources: TrackingPlanSourceRow;
  source_schema_settings: SourceSchemaSettingsRow;
  tracking_plan_violations: TrackingPlanViolationRow;
  tracking_plan_violation_users: TrackingPlanViolationUserRow;
}

/** One ingested call's decision for one destination (message-fates.ts). */
export interface MessageFateRow {
  source_id: string;
  message_id: string;
  destination_id: string;
  received_at: string;
  type: string;
  /** `sent`, or the stop reason (delivery/stop-reasons.ts). */
  decision: string;
  filter_id: string | null;
  user_hash: string | null;
  anonymous_hash: string | null;
  event_hash: string | null;
  /** JSON: a SealedBody of the call's ids and event name, or them in the clear; null for a suppressed user's call. */
  summary: string | null;
}

/** A tracking plan; `revision` grows with every change of it or its rules. */
export interface TrackingPlanRow {
  id: string;
  name: string;
  description: string | null;
  type: string;
  revision: number;
  created_at: string;
  updated_at: string;
}

/** One version of one rule; `key` is '' for the rules that have none (COMMON, IDENTIFY, GROUP). */
export interface TrackingPlanRuleRow {
  plan_id: string;
  type: string;
  key: string;
  version: number;
  /** The rule's JSON Schema as saved (JSON). */
  json_schema: string;
  created_at: string;
  updated_at: string;
}

export interface TrackingPlanSourceRow {
  source_id: string;
  plan_id: string;
  connected_at: string;
}

export interface SourceSchemaSettingsRow {
  source_id: string;
  /** The schema controls as JSON (plans/schema-controls.ts). */
  settings: string;
  updated_at: string;
}

/** A user (keyed id hash, or '*' for any user past the aggregator's bound) counted in a source's violation rows of a minute. */
export interface TrackingPlanViolationUserRow {
  source_id: string;
  minute: number;
  user_hash: string;
}

/** Violations added up per source and minute; names and rules, never values. */
export interface TrackingPlanViolationRow {
  source_id: string;
  minute: number;
  event_type: string;
  event_name: string;
  field: string;
  violation_type: string;
  description: string;
  count: number;
  first_seen_at: string;
  last_seen_at: string;
  last_message_id: string;
}

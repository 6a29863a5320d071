import type { Pressure } from '../delivery/types';
import type { FilteredCount, MessageCounts } from '../delivery/message-counts';
import type { ConsentSettings } from '../rules/consent';
import type { Suppression } from '../delivery/suppression';
import type { HealthBucket } from '../delivery/webhook-health';
import type { PersonasStore } from './personas-types';
import type { Scope } from '../access/scopes';
import type { AuditEntry, AuditRecord } from '../access/audit-entry';

export type { AuditEntry, AuditRecord } from '../access/audit-entry';
import type { DestinationFilter, FilterSettings } from '../rules/destination-filters';
import type { ArchivedCall, Replay, ReplayCounts, ReplayStatus } from '../delivery/replay';
import type { SealedBody } from '../delivery/types';
import type { StopReason } from '../delivery/stop-reasons';
import type { OperationalEventType, OperationalFormat } from '../delivery/operational-events';
import type { FunctionStore } from './functions';
import type { TransformationStore } from './transformations';
import type { ActionsMapping, DestinationType, OutboundAuth, TlsSettings } from '../mappings/types';

export type { SeenUser } from './personas-types';

/** Domain records as the rest of Switchyard sees them (the SQL shape stays inside src/store). */

export interface Source {
  id: string;
  name: string;
  /** Last four characters of the write key, so operators can tell keys apart; the key itself is stored hashed. */
  writeKeyHint: string;
  createdAt: string;
  /** Segment's source shape, kept as given (docs/migrating-from-segment.md). */
  slug?: string;
  labels: SourceLabel[];
  /** The Segment id an import matched this source by. */
  segmentId?: string;
  /** A source function: its webhook's requests run this function (`sfnc_…`) with these settings. */
  function?: SourceFunction;
}

/** A source function's instance: the function and the values of its settings (sensitive ones in clear: never answered so). */
export interface SourceFunction {
  functionId: string;
  settings: Record<string, unknown>;
  /**
   * Why its sealed settings do not open in this process (its payload key is not listed, or the row
   * was altered); `settings` is then empty. Only this source's function fails for it: every other
   * source, and this source's own calls, are read and ingested as usual.
   */
  unreadable?: string;
}

/** A source function's request whose run failed for good, with its error (in `detail`, sealed when payload keys are on). */
export interface FailedFunctionRequest {
  id: string;
  sourceId: string;
  functionId: string;
  version: number;
  receivedAt: string;
  failedAt: string;
  reason: string;
  /** The raw request and the error as JSON, or the SealedBody (JSON) holding them. */
  detail: string;
}

/** A Segment label on a source (`environment: prod`); filterable in GET /admin/sources?label=key:value. */
export interface SourceLabel {
  key: string;
  value: string;
  description?: string;
}

/** What a source is made or changed with; a write key given here is the source's from now on (it is stored hashed). */
export interface SourceFields {
  name?: string;
  slug?: string | null;
  labels?: SourceLabel[];
  segmentId?: string | null;
  writeKey?: string;
  function?: SourceFunction | null;
}

export interface Webhook {
  url: string;
  /** Static headers added to every request to this URL (seed: at most 5). */
  headers: Record<string, string>;
}

/** Why and when one webhook URL was switched off; nothing is sent to it until it is switched back on. */
export interface WebhookDisablement {
  reason: string;
  at: string;
}

/** A URL that answered 429 or 503 with Retry-After: no message sends to it before `until`. */
export interface WebhookBackpressure {
  /** Epoch ms, by the store's clock. */
  untilMs: number;
  reason: string;
}

export interface DestinationWebhook extends Webhook {
  /** Present while the URL is switched off (a 410 Gone answer, or an operator). */
  disabled?: WebhookDisablement;
  /** Present once the URL asked for backpressure (possibly over: compare `untilMs` with now). */
  backpressure?: WebhookBackpressure;
}

/** A webhook as configured: `enabled` true switches a disabled URL back on, false switches it off; absent keeps its state. */
export interface WebhookSetting extends Webhook {
  enabled?: boolean;
}

/** Standard Webhooks signing: the current secret, and the one before a rotation while its overlap lasts. */
export interface SigningSecrets {
  current: string;
  previous?: { secret: string; until: string };
}

export type { ConsentSettings } from '../rules/consent';

/** A saved destination filter: Segment's Public API shape plus where it belongs and when it changed. */
export interface DestinationFilterRecord extends DestinationFilter {
  destinationId: string;
  createdAt: string;
  updatedAt: string;
}

export interface Destination {
  id: string;
  sourceId: string;
  name: string;
  enabled: boolean;
  /** Seed: when set, every request carries X-Signature. Never leaves the store except to sign. */
  sharedSecret: string | null;
  /** When set, every request also carries Standard Webhooks headers. Never leaves the store except to sign. */
  signing: SigningSecrets | null;
  webhooks: DestinationWebhook[];
  /** Requests per second to all its URLs together, across every worker; null: no limit. */
  maxRequestsPerSecond: number | null;
  /** While paused, deliveries are held without sending (unlike `enabled: false`, which drops them). */
  paused: boolean;
  pausedAt?: string;
  consent: ConsentSettings;
  /** `webhooks` (the seed's: the whole event, URLs in order) or `actions` (mapped requests). */
  type: DestinationType;
  /** An actions destination's mappings, in saved order; empty for `webhooks`. Header values never leave the store except to send. */
  mappings: ActionsMapping[];
  /**
   * The mappings whose URL is under backpressure (it answered 429/503 with Retry-After),
   * by mapping name, as `webhooks[].backpressure` says it of a webhook's URL; over pauses may remain.
   */
  mappingBackpressure?: Record<string, WebhookBackpressure>;
  /** Outbound authentication and mutual TLS; secrets never leave the store except to send. */
  auth: OutboundAuth | null;
  tls: TlsSettings | null;
  /** A `function` destination: the function it runs and its instance's settings (sensitive values never leave the store except to run it). */
  function?: FunctionInstance | null;
  /** Its insert function instance, when it has one (at most one per destination); absent: none. */
  insertFunction?: InsertFunctionInstance;
  /**
   * Whether its requests carry the message's W3C trace context (`traceparent`, and
   * `tracestate` beside it); false sends neither, while the attempts' spans are still exported.
   */
  propagateTraceContext: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A destination function instance: a DESTINATION function (`dfn_…`) and the settings its handlers get. */
export interface FunctionInstance {
  functionId: string;
  settings: Record<string, unknown>;
}

/**
 * An insert function instance: an INSERT_DESTINATION function (`ifnd_…`) that runs on each event
 * before its destination renders or sends it, with the settings its handlers get (sensitive values
 * never leave the store except to run it).
 */
export interface InsertFunctionInstance {
  id: string;
  functionId: string;
  name: string | null;
  enabled: boolean;
  settings: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface NewDestination {
  /** A `function` destination's function and settings; its function is fixed at creation, its settings may be patched. */
  function?: FunctionInstance;
  /** Absent is `webhooks`. Fixed at creation. */
  type?: DestinationType;
  mappings?: ActionsMapping[];
  /** null clears (on PATCH). */
  auth?: OutboundAuth | null;
  tls?: TlsSettings | null;
  name?: string;
  enabled: boolean;
  maxRequestsPerSecond?: number | null;
  paused?: boolean;
  sharedSecret?: string | null;
  /** Standard Webhooks secret (`whsec_` + base64); null or "" switches that signing off. */
  signingSecret?: string | null;
  webhooks: WebhookSetting[];
  /** Absent fields take the defaults on create (no categories, deliver) and keep their value on a patch. */
  consent?: Partial<ConsentSettings>;
  /** Absent is true on create, and keeps its value on a patch. */
  propagateTraceContext?: boolean;
}

export type DestinationPatch = Partial<NewDestination> & {
  /** Attaches (or changes) its insert function instance; null detaches it. Attaching a new id where another is attached throws InsertFunctionTaken. */
  insertFunction?: InsertFunctionInstance | null;
  /** How long the replaced signing secret keeps signing after `signingSecret` changes (ms). */
  signingSecretOverlapMs?: number;
};

/**
 * Segment's regulation types. `DELETE` is the name Switchyard took first and stays,
 * meaning `DELETE_ONLY`; `SUPPRESS_WITH_DELETE` is both a deletion and a suppression.
 */
export const REGULATION_TYPES = ['DELETE', 'DELETE_ONLY', 'SUPPRESS_ONLY', 'SUPPRESS_WITH_DELETE', 'UNSUPPRESS'] as const;
export type RegulationType = (typeof REGULATION_TYPES)[number];

export interface Regulation {
  id: string;
  regulationType: RegulationType;
  subjectType: 'USER_ID';
  subjectIds: string[];
  createdAt: string;
}

/**
 * One archived message. `call` is sealed under its subject's data key, or in the clear
 * with PAYLOAD_ENCRYPTION=off or for a message with no user. The other fields name no user.
 */
export interface ArchivedMessage {
  sourceId: string;
  messageId: string;
  type: ArchivedCall['type'];
  receivedAt: string;
  /** Keyed hashes of the userId and anonymousId (privacy/visible-ids.ts). */
  userHash?: string;
  anonymousHash?: string;
  call: SealedBody | ArchivedCall;
  /** The tracking plan's verdict at ingest (its violations are sealed in `call`); absent where no plan decided. */
  planStatus?: 'passed' | 'omitted' | 'blocked';
}

/**
 * One ingested call's decision for one destination, as recorded at ingest (messages/record-fates.ts):
 * `sent` (a delivery workflow holds it; Temporal knows the rest) or the reason it was stopped.
 * `summary` holds the call's ids and event name, sealed under its data key (absent for a suppressed
 * user's call, of which nothing is kept); the hashes beside it name no one.
 */
export interface MessageFate {
  sourceId: string;
  messageId: string;
  destinationId: string;
  receivedAt: string;
  type: ArchivedCall['type'];
  decision: 'sent' | StopReason;
  filterId?: string;
  userHash?: string;
  anonymousHash?: string;
  eventHash?: string;
  summary?: SealedBody | FateSummary;
}

/** What a fate row keeps of its call, sealed: enough to say whose event it was and which. */
export interface FateSummary {
  userId?: string;
  anonymousId?: string;
  event?: string;
}

/** How fates are searched: every field narrows; `idHashes` match the user hash or the anonymous hash. */
export interface MessageFateFilter {
  sourceId?: string;
  destinationId?: string;
  decision?: 'sent' | 'stopped' | StopReason;
  idHashes?: string[];
  eventHash?: string;
  since?: string;
  until?: string;
}

/** A destination a message may be delivered to now, with what the planner needs of it. */
export interface EnabledDestination {
  id: string;
  webhookUrls: string[];
  consent: ConsentSettings;
  /** An actions destination's enabled mappings, each with its trigger (the planner decides which send). */
  mappings?: Pick<ActionsMapping, 'name' | 'trigger'>[];
  /**
   * A destination function's: the function it runs and that function's display name, which is the
   * destination's key in `integrations` (as Segment names a destination function) and whose id's
   * hex is its catalog id (a transformation's destinationMetadataId).
   */
  function?: { functionId: string; displayName: string };
}

/** Where Switchyard sends its own operational events; the secret is never part of it (write-only). */
export interface OperationalEndpointSettings {
  url: string;
  /** Event types it receives; empty: every type. */
  eventTypes: OperationalEventType[];
  format: OperationalFormat;
  enabled: boolean;
}

export interface OperationalEndpoint extends OperationalEndpointSettings {
  id: string;
  createdAt: string;
  updatedAt: string;
}

export interface Store {
  sources: {
    /** Returns the write key in clear exactly once, at creation. */
    create(name: string, fields?: SourceFields): Promise<{ source: Source; writeKey: string }>;
    /** Changes the given fields (throws WriteKeyTaken when another source has the write key). Undefined: no such source. */
    update(id: string, fields: SourceFields): Promise<Source | undefined>;
    /** The source an import made from this Segment id. */
    findBySegmentId(segmentId: string): Promise<Source | undefined>;
    get(id: string): Promise<Source | undefined>;
    list(): Promise<Source[]>;
    /** Also deletes the source's destinations. Returns false when there was no such source. */
    delete(id: string): Promise<boolean>;
    findByWriteKey(writeKey: string): Promise<Source | undefined>;
    /**
     * The source of a write key the process knows to be valid, answered from memory with no lookup
     * per key (write-key-directory.ts); undefined for a key it does not know, which may still be a
     * source made a moment ago (findByWriteKey says). Absent on a transaction's store.
     */
    knownWriteKey?(writeKey: string): Promise<Source | undefined>;
  };
  /** Source functions' requests that failed for good (store/function-requests.ts). */
  functionRequests: {
    /** Records one (a second record of the same id is ignored: the workflow's activity may run again). */
    recordFailure(request: FailedFunctionRequest): Promise<void>;
    /** A source's failed requests, newest first, at most `limit`. */
    listFailed(sourceId: string, limit: number): Promise<FailedFunctionRequest[]>;
    /** Every recorded request's id and sealed detail, for a DELETE regulation to find the ones naming its users. */
    details(): Promise<Array<Pick<FailedFunctionRequest, 'id' | 'detail'>>>;
    forget(ids: readonly string[]): Promise<void>;
  };
  /** What a Segment workspace import made, by Segment id (store/segment-imports.ts). */
  segmentImports: {
    find(kind: string, segmentId: string): Promise<{ switchyardId: string; fingerprint: string } | undefined>;
    record(kind: string, segmentId: string, switchyardId: string, fingerprint: string): Promise<void>;
  };
  /** Operational endpoints (store/operational-endpoints.ts). */
  /** Functions in Segment's shape and their versions (store/functions.ts). */
  functions: FunctionStore;
  /** Protocols transformations in Segment's shape (store/transformations.ts). */
  transformations: TransformationStore;
  /** Operational endpoints (store/operational-endpoints.ts). */
  operationalEndpoints: {
    create(settings: OperationalEndpointSettings, secret: string): Promise<OperationalEndpoint>;
    list(): Promise<OperationalEndpoint[]>;
    /**
     * Every endpoint, as raising an event reads them: from a copy in memory, read again after a
     * change (store/operational-endpoint-copy.ts); a transaction's store reads the table.
     */
    listCached(): Promise<OperationalEndpoint[]>;
    get(id: string): Promise<OperationalEndpoint | undefined>;
    /** `secret` given: replaces the secret. Undefined when there is no such endpoint. */
    update(id: string, patch: Partial<OperationalEndpointSettings>, secret?: string): Promise<OperationalEndpoint | undefined>;
    delete(id: string): Promise<boolean>;
    /** The secret in clear, for signing a request; the only read that returns it. */
    secretOf(id: string): Promise<string | undefined>;
    /**
     * After a master-key rotation (`npm run keys:rewrap`): seals up to `limit` secrets still under
     * another key (or plaintext) under the active one; `left` as the destinations' resealCredentials.
     */
    resealSecrets(limit: number): Promise<{ resealed: number; left: boolean }>;
    /** How many endpoints' secrets each master key seals (PLAINTEXT_CREDENTIALS: none). */
    secretsByMasterKey(): Promise<Record<string, number>>;
  };
  /** The configured destinations and their switched-off URLs (store/webhook-switches.ts). */
  webhookSwitches: {
    configured(): Promise<{ destinationIds: Set<string>; disabled: { destinationId: string; index: number }[] }>;
    /** When this URL was switched off; undefined while it is on. */
    disabledAt(destinationId: string, url: string): Promise<string | undefined>;
  };
  destinations: {
    create(sourceId: string, input: NewDestination): Promise<Destination>;
    get(id: string): Promise<Destination | undefined>;
    update(id: string, patch: DestinationPatch): Promise<Destination | undefined>;
    delete(id: string): Promise<boolean>;
    listBySource(sourceId: string): Promise<Destination[]>;
    /** Destinations that have an insert function instance (of `functionId` when given), oldest instance first. */
    listWithInsertFunction(functionId?: string): Promise<Destination[]>;
    /** The destination an insert function instance is attached to. */
    getByInsertFunction(instanceId: string): Promise<Destination | undefined>;
    /** Ids of the enabled destinations with at least one webhook: what a message from this source is delivered to. */
    listEnabledIds(sourceId: string): Promise<string[]>;
    /** The same destinations as listEnabledIds, with each one's webhook URLs in order (for the Web UI's attempt summaries) and its consent settings (the ingest decision). */
    listEnabled(sourceId: string): Promise<EnabledDestination[]>;
    /**
     * Sources with at least one enabled destination that has a webhook, the same test as
     * listEnabledIds (regulations notify each of them).
     */
    listSourceIdsWithEnabled(): Promise<string[]>;
    /**
     * Switches one webhook URL off with a reason (e.g. it answered 410 Gone). Keeps the first
     * reason if it is already off; false when the destination no longer has that URL.
     */
    disableWebhook(id: string, url: string, reason: string): Promise<boolean>;
    /** Switches one webhook URL back on; true when it was off (for whatever reason), false when it was on already. */
    enableWebhook(id: string, url: string): Promise<boolean>;
    /**
     * Deletes every rotated-out signing secret whose overlap has ended by `nowMs` from its row
     * (not only unused ones). `nextEndMs`: the earliest overlap still running, if any.
     */
    dropEndedSigningOverlaps(nowMs: number): Promise<{ dropped: number; nextEndMs?: number }>;
    /**
     * Seals again, under the active master key, the credentials of up to `limit` destinations sealed
     * under another (or stored plaintext), so an old master key can be retired (`npm run keys:rewrap`).
     * `left`: whether any such destination was found (call again until it is false).
     */
    resealCredentials(limit: number): Promise<{ resealed: number; left: boolean }>;
    /** How many destinations' credentials each master key seals; `(plaintext)` counts those stored without keys. */
    credentialsByMasterKey(): Promise<Record<string, number>>;
  };
  /**
   * Flow control state shared by every process (decisions in delivery/flow-control.ts).
   * Times are the store's own clock: callers get waits relative to it, never pass a time.
   */
  flowControl: {
    /**
     * Takes the destination's next send slot, unless it is more than `maxWaitUs` away; one
     * statement, so any number of workers share one limiter. Microseconds. `waitUs`: how
     * far the slot is from now; `slotUs` names the slot (the store's clock: compare it with nothing).
     */
    reserveSlot(destinationId: string, intervalUs: number, maxWaitUs: number): Promise<{ slotUs: number; waitUs: number; reserved: boolean }>;
    /**
     * At send time (delivery/flow-control.ts claimSend): `claimed`, the send is recorded at
     * `sendAtUs`, at least an interval after the last, and goes out after `waitUs` (less than
     * SEND_AHEAD_US); not claimed, the sender asks again after `waitUs`.
     */
    claimSend(destinationId: string, intervalUs: number): Promise<{ claimed: boolean; sendAtUs: number; waitUs: number }>;
    /**
     * No message sends to this URL for `forMs` from now (keeps a later pause already there). The
     * pause as it stands after the write (undefined: the destination is gone).
     */
    backpressure(destinationId: string, url: string, forMs: number, reason: string): Promise<Pressure | undefined>;
    /** The URL's pause as it stands now; undefined when there is none or it is over. */
    backpressureLeft(destinationId: string, url: string): Promise<Pressure | undefined>;
    /** Ends the URL's pause (an operator); true when there was one (over or not). */
    clearBackpressure(destinationId: string, url: string): Promise<boolean>;
  };
  regulations: {
    create(input: Omit<Regulation, 'id' | 'createdAt'>): Promise<Regulation>;
    get(id: string): Promise<Regulation | undefined>;
    /** The latest `limit` regulations, newest first. */
    list(limit: number): Promise<Regulation[]>;
  };
  /** Each destination's filters, in the order they were created (at most 10: checked by the caller). */
  destinationFilters: {
    /** undefined when the destination already has `limit` filters (counted in the same write transaction). */
    create(destinationId: string, settings: FilterSettings, limit: number): Promise<DestinationFilterRecord | undefined>;
    list(destinationId: string): Promise<DestinationFilterRecord[]>;
    /** The switched-on filters of these destinations, each destination's in saved order: what ingest decides by, in one read. */
    listEnabledFor(destinationIds: string[]): Promise<DestinationFilterRecord[]>;
    get(destinationId: string, filterId: string): Promise<DestinationFilterRecord | undefined>;
    /** Replaces the settings of a filter; undefined when there is no such filter. */
    update(destinationId: string, filterId: string, settings: FilterSettings): Promise<DestinationFilterRecord | undefined>;
    /** false when there was no such filter. */
    delete(destinationId: string, filterId: string): Promise<boolean>;
  };
  /** Which sources have seen which user ids: recorded with each request's profile updates (personas.profiles.record). */
  sourceUsers: {
    /** Source id → those of these user ids it has seen: the sources a DELETE regulation notifies. */
    sourcesThatSaw(userIds: string[]): Promise<Map<string, string[]>>;
    /** Other ids any source saw beside these user ids (anonymousIds, alias previousIds), the users themselves left out. */
    linkedIds(userIds: string[]): Promise<string[]>;
    /** Forgets every row naming these ids, as user or as linked id. */
    forget(ids: string[]): Promise<void>;
  };
  /** Ids erased by DELETE regulations, kept only as one-way hashes (see erasures.ts). */
  erasures: {
    /** Records that these ids were erased at `at` (ISO 8601). */
    add(ids: string[], at: string): Promise<void>;
    /** The latest time any of these ids was erased, if ever. */
    erasedAt(ids: string[]): Promise<string | undefined>;
    /** Per id among these that was ever erased, the latest time it was: one read for many messages (a replay's page). */
    erasedAtOf(ids: string[]): Promise<Map<string, string>>;
  };
  /** Ids suppressed by SUPPRESS_ONLY / SUPPRESS_WITH_DELETE regulations, kept only as one-way hashes (see suppressions.ts). */
  suppressions: {
    /** Suppresses these ids from `at` (ISO 8601); one suppressed again after an UNSUPPRESS starts a new suppression. */
    add(ids: string[], at: string): Promise<void>;
    /** UNSUPPRESS: lifts these ids' suppressions at `at`, for calls accepted from now on. */
    lift(ids: string[], at: string): Promise<void>;
    /** Every suppression recorded for any of these ids, lifted ones included (what an attempt checks). */
    of(ids: string[]): Promise<Suppression[]>;
    /** Per id among these with any, every suppression recorded for it, lifted ones included: `of` for many messages in one read (a replay's page). */
    ofEach(ids: string[]): Promise<Map<string, Suppression[]>>;
    /** Of these ids, those suppressed now (what ingest checks): one read for a whole request. */
    suppressedAmong(ids: string[]): Promise<Set<string>>;
  };
  /**
   * Crypto-shredding's per-subject data keys, by subject hash (identifierHash of a userId
   * or anonymousId). Keys in memory only as long as a call needs them; never logged.
   */
  dataKeys: {
    /** Each subject's key, made and stored (wrapped under the active master key) for those without one; safe across processes. */
    getOrCreate(subjectHashes: string[]): Promise<Map<string, Buffer>>;
    /** The subject's key; undefined once a regulation destroyed it (or it never existed). */
    get(subjectHash: string): Promise<Buffer | undefined>;
    /** Each of these subjects' keys that still exists (none made): `get` for many bodies in one read (a replay's page). */
    getMany(subjectHashes: string[]): Promise<Map<string, Buffer>>;
    /** Destroys these subjects' keys: every body sealed under them is erased. Resolves how many existed. */
    destroy(subjectHashes: string[]): Promise<number>;
    /**
     * Re-wraps up to `limit` keys wrapped under another master key than the active one (after a
     * rotation), so the old master key can be retired; the keys themselves, and so every sealed
     * body, stay the same. `left`: whether any such key was found (call again until it is false).
     */
    rewrap(limit: number): Promise<{ rewrapped: number; left: boolean }>;
    /** How many data keys each master key wraps. */
    countByMasterKey(): Promise<Record<string, number>>;
  };
  /** Per webhook URL and minute, the attempts every worker made (delivery/webhook-health.ts). */
  webhookHealth: {
    /** Adds these buckets to the stored ones (one transaction); also deletes buckets before `deleteBeforeMinute`. */
    add(buckets: HealthBucket[], options?: { deleteBeforeMinute?: number }): Promise<void>;
    /** A destination's buckets from `sinceMinute` (minutes since the epoch) on, any order. */
    read(destinationId: string, sinceMinute: number): Promise<HealthBucket[]>;
  };
  /** The overview's counts (delivery/message-counts.ts): received per source, filtered per destination, by minute. */
  messageCounts: {
    /** Adds these counts to the stored ones (one transaction); also deletes counts before `deleteBeforeMinute`. */
    add(counts: MessageCounts, options?: { deleteBeforeMinute?: number }): Promise<void>;
    /** Messages the source accepted in minutes [sinceMinute, untilMinute). */
    received(sourceId: string, sinceMinute: number, untilMinute: number): Promise<number>;
    /** What the destination did not get in minutes [sinceMinute, untilMinute), by reason and filter. */
    filtered(destinationId: string, sinceMinute: number, untilMinute: number): Promise<Array<Pick<FilteredCount, 'reason' | 'filterId' | 'count'>>>;
  };
  /** Every accepted message for ARCHIVE_RETENTION (message-archive.ts). */
  archive: {
    /** One INSERT for a whole request's messages; a messageId the source archived the same UTC day already is kept as it was. */
    add(messages: ArchivedMessage[]): Promise<void>;
    /**
     * One page of a source's archive received in [since, until), in receivedAt order, after `cursor`
     * (a page's `next`; absent on the last page).
     */
    page(sourceId: string, range: { since: string; until: string; planStatus?: 'blocked' }, size: number, cursor?: string): Promise<{ messages: ArchivedMessage[]; next?: string }>;
    /** Makes ready for the coming days' messages (PostgreSQL: their partitions); nothing on SQLite. */
    prepare(nowMs: number): Promise<void>;
    /**
     * Retention: removes what was received `retentionMs` before `nowMs`. PostgreSQL drops each day
     * partition wholly past it (named in `droppedPartitions`); SQLite deletes the rows.
     */
    prune(nowMs: number, retentionMs: number): Promise<{ deleted: number; droppedPartitions: string[] }>;
    /** Deletes every archived message of these subjects (keyed hashes of user or anonymous ids): erasure where nothing is sealed. */
    forget(idHashes: string[]): Promise<number>;
  };
  /** Each ingested call's decision per destination, kept ARCHIVE_RETENTION, as the archive (message-fates.ts). */
  fates: {
    /** One INSERT per request; a (source, message, destination) recorded already is kept as it was. */
    add(fates: MessageFate[]): Promise<void>;
    /** Newest first, after `cursor` (a page's `next`); 'invalid_cursor' for one no page gave. */
    list(filter: MessageFateFilter, size: number, cursor?: string): Promise<{ fates: MessageFate[]; next?: string } | 'invalid_cursor'>;
    /** Deletes the fates received before this instant. */
    prune(beforeIso: string): Promise<number>;
    /** Deletes every fate of these subjects (keyed hashes of user or anonymous ids). */
    forget(idHashes: string[]): Promise<number>;
  };
  /** Tracking plans, their rules and sources, each source's schema controls, and violations counted. */
  trackingPlans: {
    create(input: TrackingPlanInput): Promise<TrackingPlan>;
    list(): Promise<TrackingPlan[]>;
    get(id: string): Promise<TrackingPlan | undefined>;
    update(id: string, patch: Partial<TrackingPlanInput>): Promise<TrackingPlan | undefined>;
    /** Its rules and source connections go with it. */
    delete(id: string): Promise<boolean>;
    /** Rules in (type, key, version) order, a page after `cursor` (a page's `next`). */
    rules(planId: string, count: number, cursor?: string): Promise<{ rules: TrackingPlanRule[]; next?: string; total: number }>;
    /** Every rule of a plan, for compiling it. */
    allRules(planId: string): Promise<TrackingPlanRule[]>;
    /** PUT: these rules replace every rule. False: no such plan. */
    replaceRules(planId: string, rules: NewTrackingPlanRule[]): Promise<boolean>;
    /** PATCH: upsert each rule, renaming it first where `newKey` is given. False: no such plan. */
    upsertRules(planId: string, rules: Array<NewTrackingPlanRule & { newKey?: string }>): Promise<boolean>;
    /** DELETE: removes these (type, key, version). False: no such plan. */
    deleteRules(planId: string, rules: Array<Pick<NewTrackingPlanRule, 'type' | 'key' | 'version'>>): Promise<boolean>;
    /** `taken`: the source has another plan (a source has at most one); `missing`: no such plan or source. */
    connect(planId: string, sourceId: string): Promise<'connected' | 'already' | 'taken' | 'missing'>;
    disconnect(planId: string, sourceId: string): Promise<boolean>;
    sources(planId: string): Promise<string[]>;
    /** The source's plan (with the revision its compiled copy is keyed by) and its saved controls, in one read: what ingest asks per request. */
    forSource(sourceId: string): Promise<{ plan?: { id: string; name: string; revision: number }; controls?: string }>;
    /** The controls as saved (JSON), or undefined for a source that never saved any. */
    controls(sourceId: string): Promise<string | undefined>;
    setControls(sourceId: string, controls: string): Promise<void>;
  };
  /** Violations per source and minute, added to by every API process. */
  violations: {
    /** Adds counts, records which users they counted (`users`), and prunes both before `deleteBeforeMinute`. */
    add(rows: ViolationCount[], options?: { deleteBeforeMinute?: number; users?: ViolationUser[] }): Promise<void>;
    /** A DELETE regulation: deletes every row of the (source, minute) buckets these users were counted in, other users' counts of them too. */
    forgetUsers(ids: string[]): Promise<void>;
    /** Aggregated over [sinceMinute, untilMinute), optionally for one event name: the `limit` most frequent kinds (default and most 1,000) of the window's newest 10,000 rows. */
    list(sourceId: string, sinceMinute: number, untilMinute: number, eventName?: string, limit?: number): Promise<ViolationSummary[]>;
  };
  /** Replays of the archive, with the progress their workflows write. */
  replays: {
    create(replay: Replay): Promise<void>;
    get(id: string): Promise<Replay | undefined>;
    /** The latest `limit` replays, newest first. */
    list(limit: number): Promise<Replay[]>;
    /** Sets the counts (absolute: a write repeated after a crash changes nothing). */
    saveCounts(id: string, counts: ReplayCounts): Promise<void>;
    /** Sets the status (and finishedAt when it is final) unless the replay already ended; the replay as it is after. */
    setStatus(id: string, status: ReplayStatus, at: string): Promise<Replay | undefined>;
  };
  /** Profiles, audiences and computed traits (see personas-types.ts). */
  personas: PersonasStore;
  /** Scoped admin tokens, each kept as a hash. */
  tokens: TokenStore;
  /** The append-only audit log of admin changes and denied attempts. */
  audit: AuditStore;
  /**
   * Runs `work` in one write transaction, with a store whose every write joins it: an admin change
   * and its audit row commit together or not at all.
   */
  transaction<T>(work: (tx: Store) => Promise<T>): Promise<T>;
  /**
   * After a DELETE regulation: makes the rows deleted so far unreadable in the store's files. On
   * SQLite (WAL) the log still holds the pages as they were before the delete, so every committed
   * change is copied into the main file (where `secure_delete` zeroed the rows) and the log is
   * truncated. False when a reader kept the log in use past the busy timeout. PostgreSQL: true.
   */
  purgeDeletedRows(): Promise<boolean>;
  /** Resolves when the database answers a trivial query; rejects with its error otherwise (for /health). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** An admin token as the API shows it: never the token itself. */
export interface AdminToken {
  id: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface TokenStore {
  /** Returns the token in clear exactly once, at creation (`swy_…`). */
  create(input: { name: string; scopes: Scope[]; expiresAt: string | null }): Promise<{ token: AdminToken; secret: string }>;
  /** The unrevoked token this secret is (expired ones too: the caller says 401 for them). */
  findBySecret(secret: string): Promise<AdminToken | undefined>;
  list(): Promise<AdminToken[]>;
  /** False when there is no such unrevoked token. */
  revoke(id: string, at: string): Promise<boolean>;
  touch(id: string, at: string): Promise<void>;
}

export interface AuditQuery {
  since?: string;
  until?: string;
  /** A token's name or id. */
  actor?: string;
  action?: string;
  target?: string;
  /** The last record of the previous page (newest first). */
  after?: { at: string; id: string };
  limit: number;
}

export interface AuditStore {
  append(entry: AuditEntry): Promise<AuditRecord>;
  /** Newest first. */
  list(query: AuditQuery): Promise<AuditRecord[]>;
  /**
   * AUDIT_RETENTION: deletes the rows recorded before `before` (ISO time). The database refuses to
   * delete a row younger than AUDIT_LOG_KEPT_AT_LEAST_DAYS whatever asks (migration 0024).
   */
  prune(before: string): Promise<number>;
}

/** A tracking plan, as the admin API shows it. */
export interface TrackingPlan {
  id: string;
  name: string;
  description?: string;
  type: string;
  createdAt: string;
  updatedAt: string;
}

export interface TrackingPlanInput {
  name: string;
  description?: string;
  type: string;
}

/** A rule as Segment's Public API sends it; `key` is absent for COMMON, IDENTIFY and GROUP. */
export interface NewTrackingPlanRule {
  type: string;
  key?: string;
  jsonSchema: Record<string, unknown>;
  version: number;
}

export interface TrackingPlanRule extends NewTrackingPlanRule {
  createdAt: string;
  updatedAt: string;
}

/** One minute's count of one violation kind at one source (plans/violation-recorder.ts). */
export interface ViolationCount {
  sourceId: string;
  minute: number;
  eventType: string;
  eventName: string;
  field: string;
  violationType: string;
  description: string;
  count: number;
  firstSeenAt: string;
  lastSeenAt: string;
  lastMessageId: string;
}

/** A user counted in a source's violation rows of a minute; no userId: any user (past the aggregator's bound, every DELETE regulation drops the bucket). */
export interface ViolationUser {
  sourceId: string;
  minute: number;
  userId?: string;
}

export type ViolationSummary = Omit<ViolationCount, 'sourceId' | 'minute'>;

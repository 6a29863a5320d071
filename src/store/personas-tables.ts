/**
 * The SQL shape of Personas (migration 0003_personas). Kept beside tables.ts rather than in it: the
 * Personas store modules see these through `db.withTables<PersonasTables>()`.
 */

/** One person per (source, profile id): the user id when known, else the anonymous id. */
export interface ProfileRow {
  source_id: string;
  profile_id: string;
  /** The userId identify/track calls carried; null for a profile known only by an anonymous id. */
  user_id: string | null;
  /** JSON object: every identify's traits merged in arrival order. */
  traits: string;
  /** JSON object: `context.consent.categoryPreferences` of the newest event that carried them; null: none seen. */
  consent: string | null;
  /** That event's timestamp (ISO 8601 UTC): a later-arriving older event does not replace them. */
  consent_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ProfileEventRow {
  /**
   * Insertion order: breaks ties between events with the same timestamp. SQLite's rowid; a bigserial
   * on PostgreSQL, which pg returns as a string (the Personas queries only order by it).
   */
  id: number | string | null;
  source_id: string;
  profile_id: string;
  /** The track call's messageId: a call re-sent after a lost answer is recorded once. */
  message_id: string;
  event: string;
  /** JSON object of the track call's properties. */
  properties: string;
  /** ISO 8601 UTC with milliseconds (the call's corrected timestamp): compared as text. */
  timestamp: string;
}

/** Another id of a profile: an alias's previousId, or an anonymousId seen with a userId. */
export interface ProfileAliasRow {
  source_id: string;
  alias_id: string;
  profile_id: string;
}

/** audiences and computed_traits have the same columns; `definition` differs in meaning. */
export interface ComputationRow {
  id: string;
  source_id: string;
  name: string;
  /** snake_case of the name: the trait key receivers get. Unique per source across both tables. */
  key: string;
  /** JSON of the validated definition. */
  definition: string;
  /** Cron expression of its Temporal Schedule. */
  schedule: string;
  paused: number;
  created_at: string;
  updated_at: string;
  /** Snapshot version committed by the last finished sync (0: never synced). */
  last_version: number;
  last_synced_at: string | null;
  /** A sync computed this version's changes and has not committed them yet. */
  pending_version: number | null;
  /** When the pending version was computed: the timestamp of its identify calls. */
  pending_at: string | null;
  pending_changes: number | null;
}

/** What the receivers were last told: one row per profile with a value (audience: members only). */
export interface SnapshotRow {
  computation_id: string;
  profile_id: string;
  source_id: string;
  user_id: string | null;
  /** JSON text of the value sent. */
  value: string;
}

/** The changes of a pending version, frozen so a rerun sends the same messages. */
export interface ChangeRow {
  computation_id: string;
  version: number;
  profile_id: string;
  source_id: string;
  user_id: string | null;
  /** JSON text of the value to send (`false` for a member who left). */
  value: string;
  /** 1 when the profile no longer has a value: its snapshot row goes at commit. */
  cleared: number;
}

/** A type alias, not an interface: Kysely's withTables needs an index-compatible record. */
export type PersonasTables = {
  profiles: ProfileRow;
  profile_events: ProfileEventRow;
  profile_aliases: ProfileAliasRow;
  audiences: ComputationRow;
  computed_traits: ComputationRow;
  personas_snapshots: SnapshotRow;
  personas_changes: ChangeRow;
};

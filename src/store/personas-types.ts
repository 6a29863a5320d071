import type { SyncCursor } from '../personas/sync-cursor';
import type { ComputationKind, ComputationRef, ComputedTraitDefinition, Condition } from '../personas/types';
import type { ProfileUpdate } from '../personas/profile-updates';

/** Personas records as the rest of Switchyard sees them (the SQL shape is in personas-tables.ts). */

export interface Profile {
  sourceId: string;
  profileId: string;
  userId: string | null;
  traits: Record<string, unknown>;
  /** Other ids that resolve to this profile (aliases, anonymous ids seen with its user id). */
  aliases: string[];
  eventCount: number;
  /** The consent preferences of the newest event that carried any, and its timestamp. */
  consent: { categoryPreferences: Record<string, unknown>; timestamp: string } | null;
  createdAt: string;
  updatedAt: string;
}

export interface Computation<D> {
  id: string;
  kind: ComputationKind;
  sourceId: string;
  name: string;
  /** The trait key sent to receivers: snake_case of the name. */
  key: string;
  definition: D;
  schedule: string;
  paused: boolean;
  lastSync: { version: number; syncedAt: string } | null;
  pending: { version: number; computedAt: string; changes: number } | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewComputation<D> {
  name: string;
  key: string;
  definition: D;
  schedule: string;
  paused: boolean;
}

export interface ComputationStore<D> {
  create(sourceId: string, input: NewComputation<D>): Promise<Computation<D>>;
  get(id: string): Promise<Computation<D> | undefined>;
  listBySource(sourceId: string): Promise<Computation<D>[]>;
  update(id: string, patch: Partial<NewComputation<D>>): Promise<Computation<D> | undefined>;
  /** Also drops its snapshot and pending changes. False when there was no such computation. */
  delete(id: string): Promise<boolean>;
}

/** One profile whose value changed, as the sync sends it. */
export interface SyncChange {
  profileId: string;
  userId: string | null;
  /** JSON text of the value. */
  value: string;
  /** JSON text of the profile's latest consent preferences as the page is read; null: none known (or the profile is gone). */
  consent: string | null;
}

export type PreparedSync =
  | { status: 'gone' }
  | { status: 'ready'; sourceId: string; key: string; version: number; computedAt: string; changes: number; reused: boolean };

export type SyncPage =
  | { status: 'gone' | 'superseded' }
  | { status: 'pending'; sourceId: string; key: string; computedAt: string; changes: SyncChange[] };

export type CommitResult = 'committed' | 'already_committed' | 'superseded' | 'gone';

/**
 * A sync in three steps, each safe to repeat: `prepare` freezes the changes of the next snapshot
 * version (or returns the pending one), `changes` pages through them, `commit` makes them the
 * snapshot. Until commit, every rerun sees the same version and the same changes.
 */
export interface PersonasSyncStore {
  prepare(ref: ComputationRef, nowMs: number): Promise<PreparedSync>;
  /** Up to `limit` changes of the version, in profile-id order, from the cursor on. */
  changes(ref: ComputationRef, version: number, from: SyncCursor, limit: number): Promise<SyncPage>;
  commit(ref: ComputationRef, version: number): Promise<CommitResult>;
}

/** A user id one request of a source carried, with the other ids seen beside it (anonymousIds, an alias's previousId). */
export interface SeenUser {
  userId: string;
  linkedIds: string[];
}

export interface ProfileStore {
  /**
   * Applies one request's calls in one write transaction (the ingestion hot path), with the user
   * ids the source has seen in that request (every call type; see store.sourceUsers). Given the
   * request's arrival (`acceptedAt`, ISO 8601), calls about an id a DELETE regulation erased since
   * then are left out: a regulation that ran while the request was on its way is not undone.
   */
  record(sourceId: string, updates: ProfileUpdate[], seen?: SeenUser[], acceptedAt?: string): Promise<void>;
  /** The profile an id (user id, anonymous id or alias) resolves to. */
  get(sourceId: string, id: string): Promise<Profile | undefined>;
  /** Every other id of these users' profiles in any source (aliases, anonymous ids seen with them): what a regulation also stops. */
  linkedIds(userIds: string[]): Promise<string[]>;
  /** DELETE regulation: every source's profile of these users, with events, aliases and snapshot rows. Returns profiles removed. */
  forgetUsers(userIds: string[]): Promise<number>;
}

export interface PersonasStore {
  profiles: ProfileStore;
  audiences: ComputationStore<Condition>;
  computedTraits: ComputationStore<ComputedTraitDefinition>;
  sync: PersonasSyncStore;
  /** Which audience or computed trait of the source already sends this trait key, if any. */
  keyOwner(sourceId: string, key: string): Promise<ComputationRef | undefined>;
}

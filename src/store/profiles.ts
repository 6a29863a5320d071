import { sql, type Kysely } from 'kysely';
import { grantsMore, STALE_AFTER_GRANT } from '../personas/consent-grant';
import { mergePatch } from '../personas/merge-patch';
import type { ProfileUpdate } from '../personas/profile-updates';
import { raw } from '../personas/sql';
import { binaryText } from '../personas/sql-dialect';
import { dialectOf } from './dialect';
import type { PersonasTables } from './personas-tables';
import type { ProfileStore } from './personas-types';
import { erasedSince, type ErasedIdHashes } from './erasures';
import { recordSeenUsers } from './source-users';
import { chunks } from './chunks';
import type { Tables } from './tables';
import type { SeenUser } from './types';
import { writeTransaction } from './write-transaction';

type Db = Kysely<Tables & PersonasTables>;

/** Rows per multi-row INSERT: far below SQLite's bound-parameter limit at 7 columns a row. */
const ROWS_PER_INSERT = 500;

/** The (from → to) id links a request makes, in order: alias calls, and anonymous ids seen with a user id. */
function links(updates: ProfileUpdate[]): [string, string][] {
  const out: [string, string][] = [];
  for (const u of updates) {
    if (u.type === 'alias') out.push([u.previousId, u.userId]);
    // Consent rides on any call type; only identify and track link ids (a page call never did).
    else if (u.type !== 'consent' && u.userId && u.anonymousId && u.userId !== u.anonymousId) out.push([u.anonymousId, u.userId]);
  }
  return out;
}

/** The ids one update is about. */
function updateIds(u: ProfileUpdate): string[] {
  return (u.type === 'alias' ? [u.previousId, u.userId] : [u.userId, u.anonymousId]).filter((id): id is string => !!id);
}

function mentionedIds(updates: ProfileUpdate[]): string[] {
  const ids = new Set<string>();
  for (const u of updates) {
    for (const id of u.type === 'alias' ? [u.previousId, u.userId] : [u.userId, u.anonymousId]) if (id) ids.add(id);
  }
  return [...ids];
}

/** Alias ids → the profile they belong to; ids with no alias row are their own profile. */
async function resolveIds(db: Db, sourceId: string, ids: string[]): Promise<Map<string, string>> {
  const resolved = new Map<string, string>();
  for (const part of chunks(ids, ROWS_PER_INSERT)) {
    const rows = await db.selectFrom('profile_aliases').select(['alias_id', 'profile_id']).where('source_id', '=', sourceId).where('alias_id', 'in', part).execute();
    for (const row of rows) resolved.set(row.alias_id, row.profile_id);
  }
  return resolved;
}

/**
 * Makes `from` and everything it stands for part of `to`'s profile: events and aliases move over,
 * traits merge (the surviving profile's own traits win), and the old profile row goes. A later sync
 * sees the old profile leave and the merged one (possibly) join, and says so to the receivers.
 */
async function link(db: Db, sourceId: string, from: string, to: string, resolved: Map<string, string>, now: string): Promise<void> {
  const target = resolved.get(to) ?? to;
  const merged = resolved.get(from) ?? from;
  // Already one person (the usual case: every call after a login carries both ids): nothing to write.
  if (from === target || (merged === target && resolved.has(from))) return;
  if (merged !== target) {
    await db
      .insertInto('profiles')
      .values({ source_id: sourceId, profile_id: target, user_id: target, traits: '{}', created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['source_id', 'profile_id']).doNothing())
      .execute();
    const old = await db.selectFrom('profiles').select(['traits', 'consent', 'consent_at']).where('source_id', '=', sourceId).where('profile_id', '=', merged).executeTakeFirst();
    if (old) {
      const kept = await db.selectFrom('profiles').select(['traits', 'consent', 'consent_at']).where('source_id', '=', sourceId).where('profile_id', '=', target).executeTakeFirstOrThrow();
      // One person's newest preferences, whichever id they were given under.
      const consent = old.consent_at !== null && (kept.consent_at === null || old.consent_at > kept.consent_at) ? { consent: old.consent, consent_at: old.consent_at } : {};
      await db
        .updateTable('profiles')
        .set({ traits: JSON.stringify(mergePatch(JSON.parse(old.traits), JSON.parse(kept.traits))), ...consent, updated_at: now })
        .where('source_id', '=', sourceId)
        .where('profile_id', '=', target)
        .execute();
      await db.deleteFrom('profiles').where('source_id', '=', sourceId).where('profile_id', '=', merged).execute();
    }
    await db.updateTable('profile_events').set({ profile_id: target }).where('profile_id', '=', merged).where('source_id', '=', sourceId).execute();
    await db.updateTable('profile_aliases').set({ profile_id: target }).where('profile_id', '=', merged).where('source_id', '=', sourceId).execute();
    for (const [alias, profile] of resolved) if (profile === merged) resolved.set(alias, target);
    resolved.set(merged, target);
  }
  const aliases = [...new Set([from, merged])].filter((id) => id !== target);
  if (aliases.length > 0) {
    await db
      .insertInto('profile_aliases')
      .values(aliases.map((alias_id) => ({ source_id: sourceId, alias_id, profile_id: target })))
      .onConflict((oc) => oc.columns(['source_id', 'alias_id']).doUpdateSet({ profile_id: target }))
      .execute();
  }
  resolved.set(from, target);
}

/**
 * The snapshot rows of these profiles, for every audience and computed trait of the source, marked
 * stale (personas/consent-grant.ts): a profile in the computation then gets its value again, and
 * one no longer in it is told it left, whatever the destination missed while consent was withdrawn.
 */
async function staleAfterGrant(db: Db, sourceId: string, profiles: Array<{ profile_id: string; user_id: string | null }>) {
  const computations = [
    ...(await db.selectFrom('audiences').select('id').where('source_id', '=', sourceId).execute()),
    ...(await db.selectFrom('computed_traits').select('id').where('source_id', '=', sourceId).execute()),
  ];
  if (computations.length === 0) return;
  const rows = computations.flatMap(({ id }) => profiles.map(({ profile_id, user_id }) => ({ computation_id: id, profile_id, source_id: sourceId, user_id, value: STALE_AFTER_GRANT })));
  for (const part of chunks(rows, ROWS_PER_INSERT)) {
    await db
      .insertInto('personas_snapshots')
      .values(part)
      .onConflict((oc) => oc.columns(['computation_id', 'profile_id']).doUpdateSet({ value: STALE_AFTER_GRANT }))
      .execute();
  }
}

/** The stored rows of these profiles: what a request's traits merge onto. */
async function storedProfiles(db: Db, sourceId: string, profileIds: string[]) {
  const stored = new Map<string, { user_id: string | null; traits: string; consent: string | null; consent_at: string | null }>();
  for (const part of chunks(profileIds, ROWS_PER_INSERT)) {
    const rows = await db.selectFrom('profiles').select(['profile_id', 'user_id', 'traits', 'consent', 'consent_at']).where('source_id', '=', sourceId).where('profile_id', 'in', part).execute();
    for (const row of rows) stored.set(row.profile_id, row);
  }
  return stored;
}

type StoredConsent = { consent: string | null; consent_at: string | null };

/**
 * The preferences a profile keeps: those of the newest event that carried any (by the event's
 * timestamp, so a late-arriving older event does not undo a newer choice; a tie goes to the later call).
 * The incoming time is never past its receipt (profile-updates.ts), and a kept
 * time later than this call's receipt was written from a future timestamp before that rule: it
 * pins nothing, the incoming choice wins.
 */
function newestConsent(existing: StoredConsent | undefined, incoming: { preferences: Record<string, unknown>; timestamp: string; receivedAt: string } | undefined): StoredConsent {
  const kept = { consent: existing?.consent ?? null, consent_at: existing?.consent_at ?? null };
  if (!incoming) return kept;
  const keptIsNewer = kept.consent_at !== null && kept.consent_at > incoming.timestamp && Date.parse(kept.consent_at) <= Date.parse(incoming.receivedAt);
  if (keptIsNewer) return kept;
  return { consent: JSON.stringify(incoming.preferences), consent_at: incoming.timestamp };
}

export function profileStore(base: Kysely<Tables>, erasedIdHashes: ErasedIdHashes): ProfileStore {
  const db: Db = base.withTables<PersonasTables>();
  // Aliases are listed in byte order on both dialects (PostgreSQL's default collation may not be).
  const aliasOrder = sql.raw(binaryText(dialectOf(db), raw('alias_id')).sql);

  return {
    async record(sourceId, allUpdates, allSeen: SeenUser[] = [], acceptedAt?: string) {
      if (allUpdates.length === 0 && allSeen.length === 0) return;
      await writeTransaction(db, async (trx) => {
        const now = new Date().toISOString();
        let updates = allUpdates;
        let seen = allSeen;
        if (acceptedAt !== undefined) {
          // A DELETE regulation that ran since the request arrived: its ids stay forgotten.
          const ids = [...allUpdates.flatMap(updateIds), ...allSeen.flatMap((u) => [u.userId, ...u.linkedIds])];
          const erased = await erasedSince(trx as unknown as Kysely<Tables>, erasedIdHashes, ids, acceptedAt);
          if (erased.size > 0) {
            updates = allUpdates.filter((u) => !updateIds(u).some((id) => erased.has(id)));
            seen = allSeen.filter((u) => ![u.userId, ...u.linkedIds].some((id) => erased.has(id)));
          }
        }
        // Every call type counts (page, screen and group too, which change no profile).
        await recordSeenUsers(trx as unknown as Kysely<Tables>, sourceId, seen, now);
        const resolved = await resolveIds(trx, sourceId, mentionedIds(updates));
        for (const [from, to] of links(updates)) await link(trx, sourceId, from, to, resolved, now);

        const profileOf = (u: { userId?: string; anonymousId?: string }) => {
          const id = (u.userId ?? u.anonymousId)!;
          return resolved.get(id) ?? id;
        };
        // Identify rows carry traits, track rows make sure the profile exists. Each profile's rows
        // fold in call order onto what is stored (read under the write lock), then one upsert.
        const incoming = new Map<string, { userId: string | null; traits: Record<string, unknown> }[]>();
        // Each profile's newest consent preferences of the request (a later call wins a tie).
        const consents = new Map<string, { preferences: Record<string, unknown>; timestamp: string; receivedAt: string }>();
        for (const u of updates) {
          if (u.type === 'alias') continue;
          const profileId = profileOf(u);
          if (u.type === 'consent') {
            const newest = consents.get(profileId);
            if (!newest || newest.timestamp <= u.timestamp) consents.set(profileId, u);
            continue;
          }
          const rows = incoming.get(profileId) ?? [];
          rows.push({ userId: u.userId ? profileOf(u) : null, traits: u.type === 'identify' ? u.traits : {} });
          incoming.set(profileId, rows);
        }
        const stored = await storedProfiles(trx, sourceId, [...new Set([...incoming.keys(), ...consents.keys()])]);
        // Consent alone never makes a profile (only identify and track do): a page call updates one that exists.
        for (const profileId of consents.keys()) if (!incoming.has(profileId) && stored.has(profileId)) incoming.set(profileId, []);
        const profiles = [...incoming].map(([profileId, rows]) => {
          const existing = stored.get(profileId);
          const consent = newestConsent(existing, consents.get(profileId));
          // A new profile starts from its first row's traits as sent; every later row is a merge patch.
          const [start, patches] = existing ? [JSON.parse(existing.traits) as unknown, rows] : [rows[0].traits, rows.slice(1)];
          const userId = [existing?.user_id ?? null, ...rows.map((r) => r.userId)].find((id) => id !== null) ?? null;
          const traits = JSON.stringify(patches.reduce<unknown>((merged, row) => mergePatch(merged, row.traits), start));
          return { source_id: sourceId, profile_id: profileId, user_id: userId, traits, ...consent, created_at: now, updated_at: now };
        });
        // A consent grant on a profile the syncs knew: their next runs send its current state. A new
        // profile has no snapshot yet, and its first sync sends what it is in anyway.
        const granted = profiles.filter((p) => stored.has(p.profile_id) && grantsMore(stored.get(p.profile_id)!.consent, p.consent));
        for (const part of chunks(profiles, ROWS_PER_INSERT)) {
          await trx
            .insertInto('profiles')
            .values(part)
            .onConflict((oc) =>
              oc.columns(['source_id', 'profile_id']).doUpdateSet({
                traits: sql<string>`excluded.traits`,
                user_id: sql<string | null>`excluded.user_id`,
                consent: sql<string | null>`excluded.consent`,
                consent_at: sql<string | null>`excluded.consent_at`,
                updated_at: now,
              }),
            )
            .execute();
        }

        if (granted.length > 0) await staleAfterGrant(trx, sourceId, granted);

        const events = updates.flatMap((u) =>
          u.type === 'track'
            ? [{ source_id: sourceId, profile_id: profileOf(u), message_id: u.messageId, event: u.event, properties: JSON.stringify(u.properties), timestamp: u.timestamp }]
            : [],
        );
        for (const part of chunks(events, ROWS_PER_INSERT)) {
          // A re-sent call (same messageId) is already recorded: count it once.
          await trx.insertInto('profile_events').values(part).onConflict((oc) => oc.doNothing()).execute();
        }
      });
    },

    async get(sourceId, id) {
      const alias = await db.selectFrom('profile_aliases').select('profile_id').where('source_id', '=', sourceId).where('alias_id', '=', id).executeTakeFirst();
      const profileId = alias?.profile_id ?? id;
      const row = await db.selectFrom('profiles').selectAll().where('source_id', '=', sourceId).where('profile_id', '=', profileId).executeTakeFirst();
      if (!row) return undefined;
      const aliases = await db.selectFrom('profile_aliases').select('alias_id').where('profile_id', '=', profileId).where('source_id', '=', sourceId).orderBy(aliasOrder).execute();
      const { count } = await db
        .selectFrom('profile_events')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('profile_id', '=', profileId)
        .where('source_id', '=', sourceId)
        .executeTakeFirstOrThrow();
      return {
        sourceId,
        profileId,
        userId: row.user_id,
        traits: JSON.parse(row.traits) as Record<string, unknown>,
        aliases: aliases.map((a) => a.alias_id),
        eventCount: Number(count),
        consent: row.consent !== null && row.consent_at !== null ? { categoryPreferences: JSON.parse(row.consent) as Record<string, unknown>, timestamp: row.consent_at } : null,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      };
    },

    async linkedIds(userIds) {
      const linked = new Set<string>();
      for (const userId of userIds) {
        const owners = await db
          .selectFrom('profile_aliases')
          .select(['source_id', 'profile_id'])
          .where('alias_id', '=', userId)
          .union(db.selectFrom('profiles').select(['source_id', 'profile_id']).where((eb) => eb.or([eb('profile_id', '=', userId), eb('user_id', '=', userId)])))
          .execute();
        for (const { source_id, profile_id } of owners) {
          linked.add(profile_id);
          const aliases = await db.selectFrom('profile_aliases').select('alias_id').where('profile_id', '=', profile_id).where('source_id', '=', source_id).execute();
          for (const { alias_id } of aliases) linked.add(alias_id);
        }
      }
      for (const userId of userIds) linked.delete(userId);
      return [...linked].sort();
    },

    async forgetUsers(userIds) {
      return writeTransaction(db, async (trx) => {
        let removed = 0;
        for (const userId of userIds) {
          // Every source's profile this user id is, or was merged into.
          const owners = await trx
            .selectFrom('profile_aliases')
            .select(['source_id', 'profile_id'])
            .where('alias_id', '=', userId)
            .union(trx.selectFrom('profiles').select(['source_id', 'profile_id']).where((eb) => eb.or([eb('profile_id', '=', userId), eb('user_id', '=', userId)])))
            .execute();
          for (const { source_id, profile_id } of owners) {
            await trx.deleteFrom('profile_events').where('profile_id', '=', profile_id).where('source_id', '=', source_id).execute();
            await trx.deleteFrom('profile_aliases').where('profile_id', '=', profile_id).where('source_id', '=', source_id).execute();
            // The snapshot and any pending changes go too: no later sync sends anything about this person.
            await trx.deleteFrom('personas_snapshots').where('profile_id', '=', profile_id).where('source_id', '=', source_id).execute();
            await trx.deleteFrom('personas_changes').where('profile_id', '=', profile_id).where('source_id', '=', source_id).execute();
            const result = await trx.deleteFrom('profiles').where('source_id', '=', source_id).where('profile_id', '=', profile_id).executeTakeFirst();
            removed += Number(result.numDeletedRows);
          }
          await trx.deleteFrom('profile_aliases').where('alias_id', '=', userId).execute();
        }
        return removed;
      });
    },
  };
}

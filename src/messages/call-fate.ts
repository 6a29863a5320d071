import type { StopReason } from '../delivery/stop-reasons';

/**
 * What happened to one accepted call at ingest, decided once (docs/privacy.md "What happens to a
 * call: its fate"). Every part of ingestion that reads a call (profiles, consent, seen users, the
 * archive, violations, forwarding, the overview, the per-destination decision) asks FATE_READERS
 * whether it sees the call's fate instead of weighing the plan's verdict and the suppression on its
 * own: each of those choices is a row of one table, reviewable in one place.
 *
 * - `accepted`: no plan, or the plan let it through unchanged (violations reported or not).
 * - `omitted`: the plan let it through without some properties or traits (`omitted` names them).
 * - `blocked`: the plan blocked it: archived (a blocked-only replay can recover it), delivered nowhere.
 * - `suppressed`: its user is under a SUPPRESS regulation: answered as accepted, kept nowhere. It
 *   comes before the plan, so a suppressed user's call makes no violation and no forwarded copy.
 */
export type FateKind = 'accepted' | 'omitted' | 'blocked' | 'suppressed';

export const FATE_KINDS: readonly FateKind[] = ['accepted', 'omitted', 'blocked', 'suppressed'];

export interface CallFate {
  kind: FateKind;
  /** The names the plan left out, `properties.coupon` / `traits.age` (empty unless `omitted`). */
  omitted: readonly string[];
  /**
   * The plan would have blocked it, but it is the consent change itself (rules/consent.ts
   * isConsentChange): a consent change is never swallowed by a plan, so it goes on as `accepted`
   * (its violations are still reported).
   */
  exemptFromBlock?: 'consent-change';
}

/** Who reads a call's fate at ingest. `destinations` is the one decision per (message, destination). */
export type FateReader = 'profiles' | 'consent' | 'seenUsers' | 'archive' | 'violations' | 'forwardBlocked' | 'forwardViolations' | 'overview';

export const FATE_READER_NAMES: readonly FateReader[] = ['profiles', 'consent', 'seenUsers', 'archive', 'violations', 'forwardBlocked', 'forwardViolations', 'overview'];

/**
 * The one table of who sees which fate; docs/privacy.md holds the same table and
 * test/unit/call-fate.test.ts holds the two together. Why each cell is what it is:
 * - profiles (traits, events, aliases) and Personas: only what was let through; a blocked call is
 *   not the source's data until it is recovered.
 * - consent: every call the archive keeps, blocked ones included. Consent is a fact about the user,
 *   not a tracked event: a plan must never keep a withdrawal from the profile Personas syncs read.
 * - seenUsers (the user ids a source saw, with the ids linked beside them): every call the archive
 *   keeps. "Seen" is about who may hold the data: a blocked call can be recovered to every
 *   destination, and a DELETE regulation must then notify them and reach its linked ids.
 * - archive: everything but a suppressed user's calls.
 * - violations and forwarded `Violation Generated`: what the plan judged, never a suppressed
 *   user's calls (a SUPPRESS regulation stops everything derived from them).
 * - forwardBlocked: only blocked calls go to the blocked-events source.
 * - overview: every accepted call is counted received; each destination's stop is counted by the decision.
 */
export const FATE_READERS: Readonly<Record<FateKind, Readonly<Record<FateReader, boolean>>>> = {
  accepted: { profiles: true, consent: true, seenUsers: true, archive: true, violations: true, forwardBlocked: false, forwardViolations: true, overview: true },
  omitted: { profiles: true, consent: true, seenUsers: true, archive: true, violations: true, forwardBlocked: false, forwardViolations: true, overview: true },
  blocked: { profiles: false, consent: true, seenUsers: true, archive: true, violations: true, forwardBlocked: true, forwardViolations: true, overview: true },
  suppressed: { profiles: false, consent: false, seenUsers: false, archive: false, violations: false, forwardBlocked: false, forwardViolations: false, overview: true },
};

/**
 * What the per-destination decision (rules/delivery-decision.ts) is told of each fate: the stop it
 * makes for every destination, or none (`decide`: consent, integrations and filters decide per
 * destination). Same table, one more column.
 */
export const FATE_AT_DESTINATIONS: Readonly<Record<FateKind, 'decide' | Extract<StopReason, 'plan' | 'suppressed'>>> = {
  accepted: 'decide',
  omitted: 'decide',
  blocked: 'plan',
  suppressed: 'suppressed',
};

/** Whether `reader` sees a call of this fate. */
export const sees = (reader: FateReader, fate: Pick<CallFate, 'kind'>): boolean => FATE_READERS[fate.kind][reader];

/** The flags the per-destination decision reads for this fate. */
export function decisionFlags(fate: Pick<CallFate, 'kind'>): { suppressed: boolean; planBlocked?: true } {
  const stop = FATE_AT_DESTINATIONS[fate.kind];
  return stop === 'plan' ? { suppressed: false, planBlocked: true } : { suppressed: stop === 'suppressed' };
}

/** The plan's verdict as the fate reads it (status, omitted names, the consent change's exemption). */
export interface FateVerdict {
  status: 'passed' | 'omitted' | 'blocked';
  omitted: readonly string[];
  exemptFromBlock?: 'consent-change';
}

/**
 * A call's fate from what was decided about it: suppression first (nothing of a suppressed user's
 * call is kept or derived), then the plan's verdict (none: the source has no plan).
 */
export function fateOf(suppressed: boolean, verdict: FateVerdict | undefined): CallFate {
  if (suppressed) return { kind: 'suppressed', omitted: [] };
  if (!verdict) return { kind: 'accepted', omitted: [] };
  const exempt = verdict.exemptFromBlock ? { exemptFromBlock: verdict.exemptFromBlock } : {};
  if (verdict.status === 'blocked') return { kind: 'blocked', omitted: [] };
  if (verdict.status === 'omitted' && verdict.omitted.length > 0) return { kind: 'omitted', omitted: verdict.omitted, ...exempt };
  return { kind: 'accepted', omitted: [], ...exempt };
}

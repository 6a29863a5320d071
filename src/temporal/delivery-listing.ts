import type { DeliveryStatusName } from '../ports';
import { openCursor, sealCursor } from './delivery-query';

/**
 * Paging the delivery list without skipping a delivery that finishes while a client pages.
 *
 * Temporal's SQL visibility (dev server and PostgreSQL) orders a list by close time, running runs
 * first, and refuses ORDER BY; its page token is the last row's position in that order. A run that
 * closes between two pages therefore moves: ahead of the token (skipped) or back behind it
 * (repeated). So the first page fixes a moment, `at`, and the list is read as three sets whose
 * order cannot shift under a token:
 *
 *   1. running:        started by `at` and still running. Runs only leave this set, and the order
 *                      among running runs is by start time, so a token stays valid.
 *   2. closed since:   started by `at`, closed after it. Every run that left set 1 before set 1's
 *                      pages reached it is here; a run closing later closes after set 2's first
 *                      page was read, so it sorts ahead of set 2's tokens, and set 1 gave it.
 *   3. closed before:  closed by `at`. Closed runs never change.
 *
 * Every delivery started by `at` is listed. One that set 1 gave and that finished before set 2 was
 * read shows again there, with its new status; nothing else repeats. Deliveries started after the
 * first page belong to the next listing, as in any snapshot.
 */

export type ListingPhase = 'running' | 'closed-since' | 'closed-before';

const PHASES: ListingPhase[] = ['running', 'closed-since', 'closed-before'];

/**
 * Statuses whose clause requires a running run (delivery-query's statusClause). The others are
 * read in every set: a run writes its last status a moment before it closes.
 */
const RUNNING_ONLY = new Set<DeliveryStatusName>(['delivering', 'retrying']);

/** The sets a listing reads, in order, skipping the ones the status filter leaves empty. */
export function listingPhases(status: DeliveryStatusName | undefined): ListingPhase[] {
  return status !== undefined && RUNNING_ONLY.has(status) ? ['running'] : PHASES;
}

/** One set's visibility query: the filters' query narrowed to the set at `at` (an ISO date-time). */
export function phaseQuery(query: string, phase: ListingPhase, at: string): string {
  const moment = `"${new Date(Date.parse(at)).toISOString()}"`;
  switch (phase) {
    case 'running':
      return `${query} AND ExecutionStatus = "Running" AND StartTime <= ${moment}`;
    case 'closed-since':
      return `${query} AND ExecutionStatus != "Running" AND StartTime <= ${moment} AND CloseTime > ${moment}`;
    case 'closed-before':
      return `${query} AND ExecutionStatus != "Running" AND CloseTime <= ${moment}`;
  }
}

/** Where the next page starts: the moment, the set, and Temporal's token within it (none at a set's start). */
export interface ListingPosition {
  at: string;
  phase: ListingPhase;
  token?: Uint8Array;
}

/** The API's cursor: the position, sealed with the query it pages (delivery-query's sealCursor). */
export function encodeListingCursor(query: string, position: ListingPosition): string {
  const { at, phase, token } = position;
  return sealCursor(query, { at, phase, ...(token && { token: Buffer.from(token).toString('base64') }) });
}

/** The position inside a cursor made by encodeListingCursor for this query; undefined for any other text. */
export function decodeListingCursor(cursor: string, query: string): ListingPosition | undefined {
  const fields = openCursor(cursor, query);
  if (fields === undefined) return undefined;
  const { at, phase, token } = fields;
  if (typeof at !== 'string' || Number.isNaN(Date.parse(at))) return undefined;
  if (!PHASES.includes(phase as ListingPhase)) return undefined;
  if (token !== undefined && (typeof token !== 'string' || token === '')) return undefined;
  return { at, phase: phase as ListingPhase, ...(typeof token === 'string' && { token: Buffer.from(token, 'base64') }) };
}

/**
 * Where a listing goes after reading `phase` and getting Temporal's `token` back: on within the
 * set, else the next set the filter reads, else nowhere (the last page).
 */
export function nextPosition(phases: ListingPhase[], at: string, phase: ListingPhase, token: Uint8Array | undefined): ListingPosition | undefined {
  if (token && token.length > 0) return { at, phase, token };
  const next = phases[phases.indexOf(phase) + 1];
  return next === undefined ? undefined : { at, phase: next };
}

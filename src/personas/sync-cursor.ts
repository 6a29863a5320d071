/**
 * Where a Personas sync's next page begins, as the sync workflow carries it from one page to the
 * next (and across continue-as-new): how many of the version's changes were started, never a
 * profile id. A profile id is a user id, and a cursor naming one would stay in Temporal's history
 * under the master key only, out of reach of the user's crypto-shredding. The changes of
 * a version are frozen until it commits, so a position in their fixed order is stable.
 *
 * Histories from before this carry the last profile id of the previous page instead; those still
 * resume after it.
 */
export type SyncCursor = { position: number } | { afterProfileId: string } | { start: true };

/** Marks a position cursor: NUL cannot start an id any Segment library sends, and is plain in JSON. */
const POSITION = '\u0000position:';

export const positionCursor = (position: number): string => `${POSITION}${position}`;

export function readSyncCursor(cursor: string | undefined): SyncCursor {
  if (cursor === undefined) return { start: true };
  if (cursor.startsWith(POSITION)) {
    const position = Number(cursor.slice(POSITION.length));
    if (Number.isInteger(position) && position >= 0) return { position };
  }
  return { afterProfileId: cursor };
}

import type { DestinationStatus } from './types';

/**
 * Each destination's own outcome of a delivery, as the overview counts it. A delivery
 * workflow carries one entry per destination in the SwitchyardOutcomes search attribute,
 * `<outcome>:<destinationId>`: `retrying` from the start (set by the client), then the destination's
 * final status, upserted by the workflow when that destination finishes. A failure at B is then
 * never counted against A, as the message-wide SwitchyardStatus was. A replay's entries start with
 * `replay:`, so the overview reports replays apart from what the source received.
 * Pure: imported by the workflow, the client and the overview's queries alike.
 */
export const DESTINATION_OUTCOMES = ['retrying', 'delivered', 'failed', 'stopped'] as const;
export type DestinationOutcome = (typeof DESTINATION_OUTCOMES)[number];

/** The prefix of a replayed delivery's entries. */
export const REPLAY_OUTCOME_PREFIX = 'replay:';

export function outcomeEntry(outcome: DestinationOutcome, destinationId: string, replay: boolean): string {
  return `${replay ? REPLAY_OUTCOME_PREFIX : ''}${outcome}:${destinationId}`;
}

/** Every destination's entry, in the input's order: its final status when it has one, else `retrying`. */
export function outcomeEntries(destinationIds: readonly string[], finished: ReadonlyMap<string, DestinationStatus>, replay: boolean): string[] {
  return destinationIds.map((id) => outcomeEntry(finished.get(id) ?? 'retrying', id, replay));
}

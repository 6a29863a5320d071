import type { FilteredReason } from '../delivery/message-counts';
import type { DecisionRecorder } from './message-count-recorder';

/**
 * One request's overview counts, held until Temporal holds its deliveries. A request
 * answered 503 (its starts not confirmed) is sent again by its client; counted at decision time, its
 * `received` and its stops were counted once per try. Committed, they are counted once, with the
 * request that was accepted.
 */
export class PendingCounts implements DecisionRecorder {
  private readonly held: Array<(recorder: DecisionRecorder) => void> = [];

  received(sourceId: string, atMs: number, count: number): void {
    this.held.push((recorder) => recorder.received(sourceId, atMs, count));
  }

  filtered(destinationId: string, atMs: number, reason: FilteredReason, filterId?: string): void {
    this.held.push((recorder) => recorder.filtered(destinationId, atMs, reason, filterId));
  }

  transformed(destinationId: string, atMs: number, transformationId: string): void {
    this.held.push((recorder) => recorder.transformed?.(destinationId, atMs, transformationId));
  }

  /** Hands every held count to the recorder, once. */
  commitTo(recorder: DecisionRecorder | undefined): void {
    const held = this.held.splice(0);
    if (recorder) for (const record of held) record(recorder);
  }
}

/**
 * How often a read of decrypted payloads is written to the audit log: once per
 * token, action and target a minute, per API process. A read needs a token with payloads:read, so
 * only a holder can make rows, and this bounds them even so: the Temporal Web UI asks the codec
 * server once per payload it shows, dozens a page.
 */
export const PAYLOAD_READ_AUDIT_EVERY_MS = 60_000;

/** Remembers at most this many recent reads; beyond it the oldest goes (a row is then written again). */
const MAX_REMEMBERED = 10_000;

/**
 * Which payload reads are due a row: the first of each (token, action, target) in a window. Decides
 * only; reads no clock (callers pass `now`), so it is a table test (test/unit/payload-reads.test.ts).
 */
export class PayloadReadsRecorded {
  private readonly lastRecorded = new Map<string, number>();

  constructor(readonly everyMs = PAYLOAD_READ_AUDIT_EVERY_MS) {}

  /** True when this read is to be written now (and remembered as written). */
  due(tokenId: string | null, action: string, target: string | null, now: number): boolean {
    const key = JSON.stringify([tokenId, action, target]);
    const last = this.lastRecorded.get(key);
    if (last !== undefined && now - last < this.everyMs) return false;
    this.lastRecorded.delete(key);
    if (this.lastRecorded.size >= MAX_REMEMBERED) this.lastRecorded.delete(this.lastRecorded.keys().next().value!);
    this.lastRecorded.set(key, now);
    return true;
  }
}

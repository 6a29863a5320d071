import { createHash } from 'node:crypto';

/**
 * Segment's deterministic sampler (segmentio/sampler, which tsub's sample_event ports): the MD5 of
 * the JSON of a value, read as a uniform number in [0, 1], kept when below `percent`. So a retried
 * or replayed message, hashed on the same value, always gets the same answer.
 *
 * Not tsub's own: @segment/tsub 2.0.1 hashes with tiny-hashes/md5, which returns a hex string where
 * tsub expects digest bytes, so its significand is all zeros and every message is kept.
 */
export function sampleKeeps(value: unknown, percent: number): boolean {
  if (percent <= 0) return false;
  if (percent >= 1) return true;
  return uniformFromValue(value) < percent;
}

/** http://mumble.net/~campbell/tmp/random_real.c with the digest as the random bits, as the Go sampler. */
export function uniformFromValue(value: unknown): number {
  const digest = createHash('md5')
    .update(JSON.stringify(value ?? null))
    .digest();
  let significand = digest.readBigUInt64BE(0);
  let exponent = -64;
  const shift = leadingZeros64(significand);
  if (shift !== 0) {
    exponent -= shift;
    significand = ((significand << BigInt(shift)) | (digest.readBigUInt64BE(8) >> BigInt(64 - shift))) & 0xffffffffffffffffn;
  }
  // The low bit set, so the result is never exactly 0 and the rounding is unbiased.
  significand |= 1n;
  return Number(significand) * 2 ** exponent;
}

function leadingZeros64(n: bigint): number {
  return n === 0n ? 64 : 64 - n.toString(2).length;
}

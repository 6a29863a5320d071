import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { formatDuration } from '../delivery/duration';
import { ApiError } from './errors';

function tooMany(points: number, windowMs: number, what: string, msBeforeNext: number): ApiError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ApiError(429, 'rate_limited', `too many ${what} (at most ${points} per ${formatDuration(windowMs)}); retry in ${seconds} second${seconds === 1 ? '' : 's'}`, {
    'retry-after': String(seconds),
  });
}

async function consume(buckets: RateLimiterMemory, key: string, refused: (msBeforeNext: number) => ApiError): Promise<void> {
  try {
    await buckets.consume(key);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    throw refused(err.msBeforeNext);
  }
}

/** One bucket family: `points` requests per window, a 429 naming the limit beyond it. */
export function rateLimiter(points: number, windowMs: number, what: string) {
  if (points <= 0) return async () => undefined;
  const buckets = new RateLimiterMemory({ points, duration: windowMs / 1000 });
  return (key: string) => consume(buckets, key, (ms) => tooMany(points, windowMs, `requests ${what}`, ms));
}

/**
 * Failures per key (an unknown write key, a wrong admin token): `points` per window. A key that has
 * used them up is refused by `refuseIfSpent` before the work a failure would cost (a store lookup, a
 * token comparison), whatever its request holds, until the window ends; `count` records a failure.
 */
export function failureLimiter(points: number, windowMs: number, what: string) {
  if (points <= 0) return { refuseIfSpent: async () => undefined, count: async () => undefined };
  const buckets = new RateLimiterMemory({ points, duration: windowMs / 1000 });
  const refused = (ms: number) => tooMany(points, windowMs, what, ms);
  return {
    async refuseIfSpent(key: string): Promise<void> {
      const spent = await buckets.get(key);
      if (spent && spent.remainingPoints <= 0) throw refused(spent.msBeforeNext);
    },
    count: (key: string) => consume(buckets, key, refused),
  };
}

export type FailureLimiter = ReturnType<typeof failureLimiter>;

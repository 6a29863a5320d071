import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { formatDuration } from '../delivery/duration';
import { ApiError } from './errors';

/** One bucket family: `points` requests per window, a 429 naming the limit beyond it. */
export function rateLimiter(points: number, windowMs: number, what: string) {
  if (points <= 0) return async () => undefined;
  const buckets = new RateLimiterMemory({ points, duration: windowMs / 1000 });
  return async (key: string) => {
    try {
      await buckets.consume(key);
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused;
      const seconds = Math.max(1, Math.ceil(refused.msBeforeNext / 1000));
      throw new ApiError(429, 'rate_limited', `too many requests ${what} (at most ${points} per ${formatDuration(windowMs)}); retry in ${seconds} second${seconds === 1 ? '' : 's'}`, {
        'retry-after': String(seconds),
      });
    }
  };
}

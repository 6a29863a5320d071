import type { Call } from './call';
import { callProblem, MAX_BATCH_BYTES } from './call-rules';

/** At most this many forwarded calls go through one ingest of the target source: a sender's batch is bounded so too. */
export const FORWARDED_PAGE_CALLS = 100;

/**
 * Forwarded calls as the request bounds would have them: each call checked alone (one call over
 * 32 KB is refused alone, never its whole batch), the rest in pages of at most FORWARDED_PAGE_CALLS
 * calls and MAX_BATCH_BYTES bytes, in order. Pure.
 */
export function forwardedPages<T = Call>(items: readonly T[], callOf: (item: T) => Call = (item) => item as unknown as Call): { pages: T[][]; refused: string[] } {
  const pages: T[][] = [];
  const refused: string[] = [];
  let page: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const call = callOf(item);
    const problem = callProblem(call);
    if (problem) {
      refused.push(problem);
      continue;
    }
    const size = Buffer.byteLength(JSON.stringify(call.fields), 'utf8');
    if (page.length > 0 && (page.length >= FORWARDED_PAGE_CALLS || bytes + size > MAX_BATCH_BYTES)) {
      pages.push(page);
      page = [];
      bytes = 0;
    }
    page.push(item);
    bytes += size;
  }
  if (page.length > 0) pages.push(page);
  return { pages, refused };
}

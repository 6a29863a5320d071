import type { SealedBody } from '../delivery/types';
import { openForRequest, requestSubject, type FailedRequestDetail } from './source-function-request';
import type { Store } from '../store/types';
import { requestMentions } from './request-mentions';

/**
 * A DELETE regulation's reach into source functions' failed requests: each record that names one of
 * the users (request-mentions.ts) is deleted, and its request's data key destroyed, so the sealed
 * copy in the request's workflow history can never be read either. A record already unreadable (its
 * key gone) names no one any more. Answers how many were erased.
 */
export async function eraseFunctionRequestsNaming(store: Pick<Store, 'functionRequests' | 'dataKeys'>, ids: readonly string[]): Promise<number> {
  const erased: string[] = [];
  for (const row of await store.functionRequests.details()) {
    const stored = JSON.parse(row.detail) as { raw: FailedRequestDetail } | { sealed: SealedBody };
    if (await mentions(store, row.id, stored, ids)) erased.push(row.id);
  }
  if (erased.length === 0) return 0;
  await store.dataKeys.destroy(erased.map(requestSubject));
  await store.functionRequests.forget(erased);
  return erased.length;
}

/**
 * Whether a record names one of the ids. One this process cannot open (its data key sealed under a
 * payload key it does not hold: PAYLOAD_ENCRYPTION=off after it was on) is left as it is, unread:
 * no one here can read it either, and a regulation run with the keys reaches it.
 */
async function mentions(store: Pick<Store, 'dataKeys'>, id: string, stored: { raw: FailedRequestDetail } | { sealed: SealedBody }, ids: readonly string[]): Promise<boolean> {
  let detail: FailedRequestDetail | undefined;
  try {
    detail = await openForRequest<FailedRequestDetail>(store.dataKeys, id, stored);
  } catch {
    return false;
  }
  return detail !== undefined && requestMentions(detail, ids);
}

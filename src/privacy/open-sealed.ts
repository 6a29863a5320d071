import type { MessageBody, SealedBody } from '../delivery/types';
import type { Store } from '../store/types';
import { ERASED_BODY, isSealedBody, openBody, SealedBodyError, UNREADABLE_BODY, type SealPurpose } from './sealed-body';

/**
 * For an operator's eyes (the admin delivery detail, the codec server): a sealed body opened with
 * its subject's key, the visible `[erased]` marker once a regulation destroyed the key, or the
 * `[unreadable: …]` marker for a body that does not authenticate.
 */
export async function openForReader(dataKeys: Pick<Store['dataKeys'], 'get'>, messageId: string, sealed: SealedBody, purpose?: SealPurpose): Promise<MessageBody | typeof ERASED_BODY | typeof UNREADABLE_BODY> {
  const key = await dataKeys.get(sealed.subject);
  if (!key) return ERASED_BODY;
  try {
    return openBody(key, messageId, sealed, purpose);
  } catch (err) {
    if (err instanceof SealedBodyError) return UNREADABLE_BODY;
    throw err;
  }
}

/**
 * A decoded payload's value with every sealed body in it opened for the reader (or `[erased]`):
 * a DeliveryInput or AttemptRequest has its `sealedMessage` beside the `messageId` it is bound to,
 * and its destinations' own bodies under it.
 * Anything else comes back as it was; `changed` says whether anything was sealed.
 */
export async function openSealedIn(dataKeys: Pick<Store['dataKeys'], 'get'>, value: unknown): Promise<{ value: unknown; changed: boolean }> {
  let changed = false;
  // A body sealed deeper down (a destination's own body, after its filters) is bound to the messageId of the
  // nearest object above it that names one.
  const walk = async (v: unknown, messageId: string | undefined): Promise<unknown> => {
    if (Array.isArray(v)) return Promise.all(v.map((item) => walk(item, messageId)));
    if (typeof v !== 'object' || v === null) return v;
    const record = v as Record<string, unknown>;
    const bound = typeof record.messageId === 'string' ? record.messageId : messageId;
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(record)) {
      if (isSealedBody(item) && bound !== undefined) {
        changed = true;
        out[k] = await openForReader(dataKeys, bound, item);
      } else out[k] = await walk(item, bound);
    }
    return out;
  };
  const opened = await walk(value, undefined);
  return { value: opened, changed };
}

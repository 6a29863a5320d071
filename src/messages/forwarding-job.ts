import { createHash } from 'node:crypto';
import type { CallType, MessageBody, SealedBody } from '../delivery/types';
import type { Keyring } from '../privacy/keyring';
import { FORWARDED_CALL, isSealedBody, openBody, sealBody, SealedBodyError } from '../privacy/sealed-body';
import { messageSubject } from '../privacy/subjects';
import type { Store } from '../store/types';
import type { Call } from './call';

/**
 * The durable job that forwards one page of a tracking plan's calls into another source: a
 * workflow per page (workflows/forward-plan-calls.ts), started with the origin's request, whose
 * activity ingests the page into the target on a worker and retries until the target takes it. The
 * origin's sender hears 200 once the job is held by Temporal, whatever the target's state: a target
 * that fails delays its own forwarded calls, never the origin's answer, and nothing is lost.
 */
export interface ForwardingJob {
  originSourceId: string;
  targetSourceId: string;
  /** Each call as given, or sealed under the data key of the user whose call it came from. */
  calls: ForwardedCall[];
}

/** One forwarded call: sealed (its fields under its original's subject) when payload keys are on, else as it is. */
export type ForwardedCall = { type: CallType; messageId: string; sealed: SealedBody } | { type: CallType; messageId: string; fields: Record<string, unknown> };

/** A forwarded call and the original message it came from (whose user the call is about). */
export interface CallFrom {
  call: Call;
  original: MessageBody;
}

/**
 * The job's workflow id: the target and the page's messageIds (each derived from its original), so
 * the sender's retry of the same request starts no second job, and a second job would still forward
 * nothing twice (the target's own workflow ids dedupe).
 */
export function forwardingJobId(targetSourceId: string, calls: ReadonlyArray<Pick<ForwardedCall, 'messageId'>>): string {
  const hash = createHash('sha256')
    .update(JSON.stringify(calls.map((c) => c.messageId)))
    .digest('hex')
    .slice(0, 32);
  return `forward:${targetSourceId}:${hash}`;
}

const messageIdOf = (call: Call) => (typeof call.fields.messageId === 'string' ? call.fields.messageId : '');

/**
 * The page's calls as the job carries them. With keys each call's fields are sealed under its
 * original's subject: a forwarded call is that user's data (a blocked event is the call itself, a
 * `Violation Generated` quotes its names), so a DELETE regulation reaches it in the job's history too.
 */
export async function forwardedCalls(page: readonly CallFrom[], seal?: { keyring: Keyring; dataKeys: Pick<Store['dataKeys'], 'getOrCreate'> }): Promise<ForwardedCall[]> {
  if (!seal) return page.map(({ call }) => ({ type: call.type, messageId: messageIdOf(call), fields: call.fields }));
  const subjects = page.map(({ original }) => messageSubject(seal.keyring, original.type, original));
  const wanted = [...new Set(subjects.filter((s): s is string => s !== undefined))];
  const keys = wanted.length > 0 ? await seal.dataKeys.getOrCreate(wanted) : new Map<string, Buffer>();
  return page.map(({ call }, i): ForwardedCall => {
    const subject = subjects[i];
    const messageId = messageIdOf(call);
    if (subject === undefined) return { type: call.type, messageId, fields: call.fields };
    return { type: call.type, messageId, sealed: sealBody(keys.get(subject)!, subject, messageId, { type: call.type, ...call.fields }, FORWARDED_CALL) };
  });
}

/** The job's calls opened again; a call whose user was erased since (its key is gone, or replaced) is left out. */
export async function openedCalls(calls: readonly ForwardedCall[], dataKeys: Pick<Store['dataKeys'], 'getMany'>): Promise<{ calls: Call[]; erased: number }> {
  const subjects = [...new Set(calls.flatMap((c) => ('sealed' in c && isSealedBody(c.sealed) ? [c.sealed.subject] : [])))];
  const keys = subjects.length > 0 ? await dataKeys.getMany(subjects) : new Map<string, Buffer>();
  const opened: Call[] = [];
  let erased = 0;
  for (const call of calls) {
    if ('fields' in call) {
      opened.push({ type: call.type, fields: call.fields });
      continue;
    }
    const key = keys.get(call.sealed.subject);
    if (!key) {
      erased += 1;
      continue;
    }
    try {
      const { type: _type, ...fields } = openBody(key, call.messageId, call.sealed, FORWARDED_CALL);
      opened.push({ type: call.type, fields });
    } catch (err) {
      if (!(err instanceof SealedBodyError)) throw err;
      erased += 1;
    }
  }
  return { calls: opened, erased };
}

import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { CallIds } from '../delivery/erasure';
import type { MessageBody, SealedBody, TraceCarrier } from '../delivery/types';
import { openWithKey, sealWithKey } from './aes-gcm';

/**
 * A message body sealed under its subject's data key (crypto-shredding): destroying the
 * key makes every copy unreadable — workflow inputs, attempt inputs, Temporal's backups and
 * archives — while the master-key codec around it keeps working. The subject hash and the
 * messageId are bound as AAD: a sealed body moved onto another subject or message does not open.
 */

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** What a reader shows in place of a body whose subject's key was destroyed: a value, never an error. */
export const ERASED_BODY = '[erased]';
/**
 * What a reader shows in place of a body that does not open under its subject's existing key
 * (altered in Temporal's store, or moved from another message): one bad body must not hide the
 * rest of a delivery's detail or of a Web UI page. Sending it still fails loudly (the worker).
 */
export const UNREADABLE_BODY = '[unreadable: the sealed body does not authenticate]';

/**
 * What a sealed value is for, bound into its AAD with the subject and messageId: a delivery body,
 * or an archived call, so neither opens in the other's place.
 */
export type SealPurpose = 'switchyard-sealed-body-v1' | 'switchyard-archived-call-v1' | 'switchyard-forwarded-call-v1' | 'switchyard-function-logs-v1' | 'switchyard-function-request-v1' | 'switchyard-call-fate-v1';
export const ARCHIVED_CALL: SealPurpose = 'switchyard-archived-call-v1';
/** A call a tracking plan forwards into another source, sealed in its forwarding job's input (messages/forwarding-job.ts). */
export const FORWARDED_CALL: SealPurpose = 'switchyard-forwarded-call-v1';
/** A destination function's console output of one attempt, sealed beside its result in history as `{logs}` (activities/attempt-function.ts). */
export const FUNCTION_LOGS: SealPurpose = 'switchyard-function-logs-v1';
/** A source function's raw webhook request (and, once it failed, its error), sealed under the request's own data key (messages/source-function-request.ts). */
export const FUNCTION_REQUEST: SealPurpose = 'switchyard-function-request-v1';
/** A fate row's ids and event name (messages/record-fates.ts): what "what happened to one event" shows with payloads:read. */
export const CALL_FATE: SealPurpose = 'switchyard-call-fate-v1';

const aad = (subject: string, messageId: string, purpose: SealPurpose) => Buffer.from(`${purpose}\0${subject}\0${messageId}`, 'utf8');

/** The call's ids beside a delivery body are bound apart from any body: they never open in a body's place. */
const idsAad = (subject: string, messageId: string) => Buffer.from(`switchyard-call-ids-v1\0${subject}\0${messageId}`, 'utf8');

/** A message's trace context beside its body, bound apart like the ids: it never opens in a body's or the ids' place. */
const traceAad = (subject: string, messageId: string) => Buffer.from(`switchyard-trace-context-v1\0${subject}\0${messageId}`, 'utf8');

/**
 * Which data key a value was sealed under, without saying anything of the key
 * (a truncated HMAC under the key itself). A subject's key is made anew after a regulation
 * destroyed it (a DELETE_ONLY user who came back): a body whose check value is not the current
 * key's was sealed under the destroyed one, so it is erased, not altered.
 */
export function keyCheck(dataKey: Buffer): string {
  return createHmac('sha256', dataKey).update('switchyard-key-check-v1').digest().subarray(0, 8).toString('base64url');
}

/**
 * `ids`: the call's ids, sealed beside the body under the same key, for the
 * send-time checks of a body a destination's filters stripped of them.
 */
export function sealBody(dataKey: Buffer, subject: string, messageId: string, body: MessageBody, purpose: SealPurpose = 'switchyard-sealed-body-v1', ids?: CallIds, trace?: TraceCarrier): SealedBody {
  const iv = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
  cipher.setAAD(aad(subject, messageId, purpose));
  const data = Buffer.concat([cipher.update(JSON.stringify(body), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return {
    sealed: 1,
    subject,
    iv: iv.toString('base64'),
    data: data.toString('base64'),
    keyCheck: keyCheck(dataKey),
    ...(ids && { ids: sealWithKey(dataKey, idsAad(subject, messageId), Buffer.from(JSON.stringify(ids), 'utf8')).toString('base64') }),
    ...(trace && { trace: sealWithKey(dataKey, traceAad(subject, messageId), Buffer.from(JSON.stringify(trace), 'utf8')).toString('base64') }),
  };
}

/**
 * The trace context sealed beside a body (sealBody `trace`), or undefined for a body
 * sealed without one. One that does not authenticate is dropped, not thrown: a trace is never a
 * reason not to deliver (the body beside it is checked on its own).
 */
export function openTraceContext(dataKey: Buffer, messageId: string, sealed: SealedBody): unknown {
  if (sealed.trace === undefined) return undefined;
  try {
    return JSON.parse(openWithKey(dataKey, traceAad(sealed.subject, messageId), Buffer.from(sealed.trace, 'base64')).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** A sealed body that does not open under the key given (altered, or moved onto another subject or message). */
export class SealedBodyError extends Error {
  override name = 'SealedBodyError';
}

/**
 * A sealed body whose key check names another key than the subject's current one: sealed under a
 * key a regulation destroyed, the subject having a new one since. Erased, not altered.
 */
export class ReplacedKeyError extends SealedBodyError {
  override name = 'ReplacedKeyError';
}

/** The call's ids sealed beside a body (sealBody `ids`), or undefined for a body sealed without them. */
export function openCallIds(dataKey: Buffer, messageId: string, sealed: SealedBody): CallIds | undefined {
  if (sealed.ids === undefined) return undefined;
  try {
    return JSON.parse(openWithKey(dataKey, idsAad(sealed.subject, messageId), Buffer.from(sealed.ids, 'base64')).toString('utf8')) as CallIds;
  } catch {
    throw new SealedBodyError(`the call ids sealed with message ${messageId} do not authenticate under its subject's key`);
  }
}

export function openBody(dataKey: Buffer, messageId: string, sealed: SealedBody, purpose: SealPurpose = 'switchyard-sealed-body-v1'): MessageBody {
  if (sealed.keyCheck !== undefined && sealed.keyCheck !== keyCheck(dataKey)) {
    throw new ReplacedKeyError(`sealed body of message ${messageId} was sealed under a data key a regulation destroyed (its subject has a new one)`);
  }
  const data = Buffer.from(sealed.data, 'base64');
  if (data.length < TAG_BYTES) throw new SealedBodyError(`sealed body of message ${messageId} is truncated`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(aad(sealed.subject, messageId, purpose));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    const text = Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as MessageBody;
  } catch {
    throw new SealedBodyError(`sealed body of message ${messageId} does not authenticate under its subject's key`);
  }
}

/** Whether a value read from a payload is a sealed body (the codec server and history readers look for them). */
export function isSealedBody(value: unknown): value is SealedBody {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.sealed === 1 && typeof v.subject === 'string' && typeof v.iv === 'string' && typeof v.data === 'string';
}

import type { MessageBody, SealedBody } from '../delivery/types';
import { FUNCTION_REQUEST, isSealedBody, openBody, sealBody, SealedBodyError } from '../privacy/sealed-body';
import type { Store } from '../store/types';
import type { SourceFunctionRetry } from '../functions/source-retry';

/**
 * One request to a source function's webhook, as its workflow carries it: the raw request (headers,
 * body, url) is a third party's data about whoever it names, and nothing tells whom before the
 * function runs, so it is sealed under a data key of its own (subject `fnreq_<requestId>`) when
 * payload keys are on. A failed request's record (its request and error) is sealed under the same key.
 */

export interface RawFunctionRequest {
  headers: Record<string, string>;
  body: string;
  url: string;
}

/** What a failed request's record keeps, sealed under the request's own key: the request, its error and its console output. */
export interface FailedRequestDetail {
  request: RawFunctionRequest;
  error: { type: string; message: string };
  logs: string[];
}

export interface SourceFunctionRequest {
  requestId: string;
  sourceId: string;
  /** When the webhook received it (epoch ms): receivedAt of every call it emits. */
  receivedAtMs: number;
  request: { raw: RawFunctionRequest } | { sealed: SealedBody };
  retry: SourceFunctionRetry;
}

/** The subject of a request's own data key. */
export const requestSubject = (requestId: string) => `fnreq_${requestId}`;

type DataKeys = Pick<Store['dataKeys'], 'getOrCreate'>;

/** `value` sealed under the request's data key (made now), or as it is without payload keys. */
export async function sealForRequest<T extends object>(dataKeys: DataKeys | undefined, requestId: string, value: T): Promise<{ raw: T } | { sealed: SealedBody }> {
  if (!dataKeys) return { raw: value };
  const subject = requestSubject(requestId);
  const key = (await dataKeys.getOrCreate([subject])).get(subject)!;
  return { sealed: sealBody(key, subject, requestId, value as unknown as MessageBody, FUNCTION_REQUEST) };
}

/** The value again; undefined once its key is gone (erased) or it does not open. */
export async function openForRequest<T>(dataKeys: Pick<Store['dataKeys'], 'get'>, requestId: string, value: { raw: T } | { sealed: SealedBody }): Promise<T | undefined> {
  if ('raw' in value) return value.raw;
  if (!isSealedBody(value.sealed)) return undefined;
  const key = await dataKeys.get(value.sealed.subject);
  if (!key) return undefined;
  try {
    return openBody(key, requestId, value.sealed, FUNCTION_REQUEST) as unknown as T;
  } catch (err) {
    if (err instanceof SealedBodyError) return undefined;
    throw err;
  }
}

/** The workflow id of one request: a sender's request is recorded once. */
export const sourceFunctionWorkflowId = (sourceId: string, requestId: string) => `source-function:${sourceId}:${requestId}`;

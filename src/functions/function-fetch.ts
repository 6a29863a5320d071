import { request, type Agent } from 'undici';
import type { FetchAnswer, FetchRequest } from './types';

/**
 * A function's `fetch`, sent by the host process on an HTTP pool whose every connection passes the
 * egress guard (activities/egress-connector.ts: the SSRF rule, DNS resolved once and pinned), so a
 * function reaches exactly what a webhook may. Redirects are followed as node-fetch does, each hop
 * through the same guard; the response body is read up to a cap; everything ends by the deadline.
 */

/** The most of a response body a function can read; a bigger one fails its fetch. */
export const FETCH_RESPONSE_CAP = 1024 * 1024;
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function functionFetch(agent: Agent): (req: FetchRequest, timeoutMs: number) => Promise<FetchAnswer> {
  return async (req, timeoutMs) => {
    const signal = AbortSignal.timeout(timeoutMs);
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return { error: `fetch: ${req.url} is not an absolute URL` };
    }
    let method = req.method;
    let body = req.body === undefined ? undefined : Buffer.from(req.body, 'latin1');
    const headers = Object.fromEntries(req.headers.filter(([name]) => name !== 'host' && name !== 'content-length'));
    try {
      for (let hop = 0; ; hop++) {
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: `fetch: only http and https URLs can be fetched, not ${url.protocol}` };
        const response = await request(url, { method, headers, body, dispatcher: agent, signal, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
        const location = response.headers.location;
        if (REDIRECTS.has(response.statusCode) && typeof location === 'string') {
          await response.body.dump().catch(() => undefined);
          if (hop >= MAX_REDIRECTS) return { error: `fetch: more than ${MAX_REDIRECTS} redirects from ${req.url}` };
          url = new URL(location, url);
          if (response.statusCode === 303 || ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')) {
            method = 'GET';
            body = undefined;
          }
          continue;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of response.body) {
          size += (chunk as Buffer).length;
          if (size > FETCH_RESPONSE_CAP) {
            response.body.destroy();
            return { error: `fetch: the response from ${url.host} is over ${FETCH_RESPONSE_CAP} bytes, the most a function can read` };
          }
          chunks.push(chunk as Buffer);
        }
        const answerHeaders: [string, string][] = [];
        for (const [name, value] of Object.entries(response.headers)) {
          for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) answerHeaders.push([name, v]);
        }
        return { status: response.statusCode, statusText: '', headers: answerHeaders, url: url.href, body: Buffer.concat(chunks).toString('latin1') };
      }
    } catch (err) {
      if (signal.aborted) return { error: `fetch: ${url.host} did not answer within the function's time limit` };
      const error = err as Error & { cause?: Error };
      return { error: `fetch: ${error.cause?.message ?? error.message}` };
    }
  };
}

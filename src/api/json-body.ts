import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors';

/**
 * Deepest nesting of objects and arrays a request body may have. Segment payloads are a few levels
 * deep; a body of 500 KB could otherwise nest ~80,000 levels and overflow the stack of every
 * recursive step after parsing (schema checks, JSON.stringify for size limits and for Temporal).
 */
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting in a JSON text, stopping early once `limit` is passed; strings are skipped. */
export function jsonNestingDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * JSON bodies for every route: UTF-8 only (RFC 8259), nesting bounded, and `__proto__` /
 * `constructor.prototype` keys refused (Fastify's secure parser), each as a 400 with a JSON error.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  parseAsStrictJson(app, 'application/json');
}

/**
 * Bodies of `contentType` parsed exactly as JSON bodies are, in `app`'s own context (Fastify keeps
 * parsers per plugin). The ingestion routes use it for `text/plain`: Segment's browser library sends
 * JSON under that type so that a simple request needs no preflight, and Kotlin's sends its batches so.
 */
export function parseAsStrictJson(app: FastifyInstance, contentType: string): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  if (app.hasContentTypeParser(contentType)) app.removeContentTypeParser(contentType);
  app.addContentTypeParser(contentType, { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = strictUtf8.decode(body as Buffer);
    } catch {
      return done(new ApiError(400, 'invalid_json', 'body is not valid UTF-8'), undefined);
    }
    // An empty body is an empty body, whatever its type says: a DELETE or a body-less POST sent by a
    // client that sets `Content-Type: application/json` on every request. A route that needs a body
    // still answers 400 naming it (its schema); one that takes none proceeds.
    if (text.trim() === '') return done(null, undefined);
    if (jsonNestingDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      return done(new ApiError(400, 'invalid_json', `body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    }
    // The default parser answers through its callback; there is nothing to await.
    void parseJson(request, text, (err, value) => {
      if (err) return done(new ApiError(400, 'invalid_json', `body is not valid JSON: ${err.message}`), undefined);
      done(null, value);
    });
  });
}

/** What a client gets when Node's HTTP parser refuses the request before Fastify sees it. */
function clientErrorReply(code: string | undefined): [number, string, string] {
  if (code === 'HPE_HEADER_OVERFLOW') return [431, 'headers_too_large', 'request headers are too large'];
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'request_timeout', 'the request took too long to arrive'];
  return [400, 'bad_request', 'malformed HTTP request'];
}

/**
 * Fastify's `clientErrorHandler`: oversize headers and malformed requests get the same
 * `{code, message}` JSON as every other error instead of Node's bare text reply.
 */
export function replyToClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message] = clientErrorReply(err.code);
  const body = JSON.stringify({ code, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

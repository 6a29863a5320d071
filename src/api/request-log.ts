/**
 * What a request log line says about the request: Fastify's own fields, with the values of query
 * parameters that carry user data censored (logs name no user id). The admin API and the
 * portal search deliveries by `?userId=`; a log line keeps that the filter was used, not for whom.
 */

/** Query parameters whose values are user data. */
const USER_DATA_PARAMS = new Set(['userid']);

export const CENSORED = '[redacted]';

/** `url` (path and query, as Fastify logs it) with the values of user-data parameters censored; anything else left byte for byte. */
export function censoredUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    let name: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      name = rawName;
    }
    return USER_DATA_PARAMS.has(name.toLowerCase()) ? `${rawName}=${CENSORED}` : pair;
  });
  return `${url.slice(0, q)}?${query.join('&')}`;
}

interface LoggedRequest {
  method: string;
  url: string;
  headers?: Record<string, string | string[] | undefined>;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** Fastify's `req` serializer (fastify/lib/logger-pino.js), the URL censored. */
export function requestLogValue(req: LoggedRequest) {
  return {
    method: req.method,
    url: censoredUrl(req.url),
    version: req.headers?.['accept-version'],
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

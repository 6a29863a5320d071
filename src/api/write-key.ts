import type { FastifyRequest } from 'fastify';

/** Segment's Tracking API: HTTP Basic with the write key as username (empty password). Read before the body arrives. */
export function headerWriteKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  return decoded.split(':')[0] || undefined;
}

/** The other way Segment's libraries send it (analytics.js, some servers): `writeKey` in the JSON body. */
export function bodyWriteKey(request: FastifyRequest): string | undefined {
  const body = request.body as { writeKey?: unknown } | undefined;
  return typeof body?.writeKey === 'string' && body.writeKey ? body.writeKey : undefined;
}

import type { FastifyRequest } from 'fastify';
import type { Source, Store } from '../store/types';
import { unauthorized } from './errors';

/** Segment's Tracking API: HTTP Basic with the write key as username (empty password), or `writeKey` in the body. */
export function writeKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header && /^basic /i.test(header)) {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const user = decoded.split(':')[0];
    if (user) return user;
  }
  const body = request.body as { writeKey?: unknown } | undefined;
  return typeof body?.writeKey === 'string' && body.writeKey ? body.writeKey : undefined;
}

export async function authenticateSource(request: FastifyRequest, store: Store): Promise<Source> {
  const writeKey = writeKeyOf(request);
  if (!writeKey) throw unauthorized('missing write key: send HTTP Basic auth with the write key as username, or writeKey in the body');
  const source = await store.sources.findByWriteKey(writeKey);
  if (!source) throw unauthorized('unknown write key');
  return source;
}

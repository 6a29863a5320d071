import { createGunzip } from 'node:zlib';
import type { FastifyInstance } from 'fastify';

/**
 * Segment clients may gzip request bodies. Inflating happens before Fastify's body limit is
 * applied, so the limit counts inflated bytes and a small gzip bomb cannot grow past it.
 */
export function acceptGzipBodies(app: FastifyInstance): void {
  app.addHook('preParsing', async (request, _reply, payload) => {
    const encoding = request.headers['content-encoding'];
    if (!encoding || encoding === 'identity') return payload;
    if (encoding !== 'gzip') {
      throw Object.assign(new Error(`content-encoding: ${encoding} is not supported; send gzip or an uncompressed body`), { statusCode: 415, code: 'unsupported_encoding' });
    }
    const gunzip = createGunzip();
    gunzip.on('error', (err) => Object.assign(err, { statusCode: 400, code: 'invalid_gzip', message: `body is not valid gzip: ${err.message}` }));
    delete request.headers['content-length'];
    return payload.pipe(gunzip);
  });
}

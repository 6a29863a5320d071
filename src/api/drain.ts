import type { FastifyInstance } from 'fastify';

/**
 * Graceful close for `app.close()` (SIGTERM): Fastify stops accepting connections and answers
 * requests that arrive on open ones with 503, while requests already being handled run to the end.
 * Node only closes connections that are idle at that moment, though; a keep-alive connection whose
 * request finishes later would stay open (and hold the close) until its keep-alive timeout. So
 * while closing, every reply carries `Connection: close` and Node closes its socket once sent.
 */
export function closeConnectionsWhileDraining(app: FastifyInstance): void {
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (draining) reply.header('connection', 'close');
  });
}

import Fastify, { type FastifyInstance } from 'fastify';
import { adminRoutes } from '../../src/api/admin';
import { installErrorHandler } from '../../src/api/errors';
import { installJsonBodyParser } from '../../src/api/json-body';
import type { DeliveryPolicy } from '../../src/delivery/types';
import type { Deliveries } from '../../src/ports';
import type { Store } from '../../src/store';
import type { SandboxPool } from '../../src/functions/sandbox-pool';

/** The admin API on its own (no Temporal): app.inject against a real store. */
export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** CRUD never starts deliveries; a call here would be a bug. */
export const noDeliveries: Deliveries = {
  start: async () => {
    throw new Error('admin CRUD must not start deliveries');
  },
  forgetUsers: async () => {
    throw new Error('admin CRUD must not delete deliveries');
  },
  stopUsers: async () => {
    throw new Error('admin CRUD must not stop deliveries');
  },
  reachable: async () => {
    throw new Error('admin CRUD must not ask for health');
  },
  health: async () => {
    throw new Error('admin CRUD must not ask for health');
  },
  list: async () => {
    throw new Error('admin CRUD must not list deliveries');
  },
  count: async () => {
    throw new Error('admin CRUD must not count deliveries');
  },
  history: async () => {
    throw new Error('admin CRUD must not read delivery history');
  },
  redeliver: async () => {
    throw new Error('admin CRUD must not redeliver');
  },
  startRedeliveryJob: async () => {
    throw new Error('admin CRUD must not start redelivery jobs');
  },
  redeliveryJob: async () => {
    throw new Error('admin CRUD must not read redelivery jobs');
  },
  drain: async () => undefined,
  // Resuming a destination wakes its held deliveries: nothing is running here.
  wakeHeld: async () => 0,
};

export const policy: DeliveryPolicy = { retryWindowMs: 60_000, timeoutMs: 5_000, initialBackoffMs: 1_000, maxBackoffMs: 10_000 };

/**
 * The admin plugin alone, with the same Ajv options and error handler as buildApp; with
 * `strictJson`, also its JSON body parser (UTF-8 only, nesting bounded), as the fuzzers need.
 */
export async function buildAdminApp(store: Store, options: { strictJson?: boolean; functionSandbox?: SandboxPool } = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, allowUnionTypes: true } },
  });
  installErrorHandler(app);
  if (options.strictJson) installJsonBodyParser(app);
  await app.register(adminRoutes, { prefix: '/admin', store, deliveries: noDeliveries, adminToken: ADMIN_TOKEN, policy, keyring: undefined, functionSandbox: options.functionSandbox });
  await app.ready();
  return app;
}

import type { FastifyPluginAsync } from 'fastify';
import type { Store } from '../../store/types';
import type { Deliveries } from '../deliveries';
import { requireAdminToken } from './auth';
import { destinationRoutes } from './destinations';
import { sourceRoutes } from './sources';

export interface AdminOptions {
  store: Store;
  deliveries: Deliveries;
  adminToken: string;
}

/**
 * The admin API, one plugin per resource. The token check is a hook on this plugin's context,
 * so it guards every resource registered below it and nothing outside /admin.
 */
export const adminRoutes: FastifyPluginAsync<AdminOptions> = async (app, { store, deliveries, adminToken }) => {
  app.addHook('onRequest', requireAdminToken(adminToken));
  await app.register(sourceRoutes, { store });
  await app.register(destinationRoutes, { store });

  // ---- Regulations (owned by another engineer) ----------------------------------------------
  // When src/api/admin/regulations.ts exists, import { regulationRoutes } from './regulations'
  // and register it here, behind the same token check:
  //   await app.register(regulationRoutes, { store, deliveries });
  // Regulations start deliveries (one delete notification per source); sources and
  // destinations never do, which is why only this line needs `deliveries`.
  void deliveries;
  // ---------------------------------------------------------------------------------------------
};

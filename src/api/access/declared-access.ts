import type { FastifyInstance, RouteOptions } from 'fastify';
import { isGuardedUrl, routeAccess, type RouteAccess } from './route-access';

export interface GuardedRoute {
  method: string;
  url: string;
  /** Undefined: the route declares no scope, and is refused to every token. */
  access: RouteAccess | undefined;
}

const GUARDED = new WeakMap<FastifyInstance, GuardedRoute[]>();

/**
 * Records every admin, codec and portal-settings route as it is registered, with what it declares
 * in route-access.ts, so a test can walk them all (Fastify's own list is text for people) and fail
 * for one that declares nothing. Call before any route is registered.
 */
export function recordGuardedRoutes(app: FastifyInstance): void {
  const routes: GuardedRoute[] = [];
  GUARDED.set(app, routes);
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!isGuardedUrl(route.url)) return;
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') routes.push({ method, url: route.url, access: routeAccess(method, route.url) });
    }
  });
}

export const guardedRoutes = (app: FastifyInstance): GuardedRoute[] => GUARDED.get(app) ?? [];

import type { FastifyRequest } from 'fastify';
import { decideAccess, type Actor } from '../../access/scopes';
import type { Store } from '../../store/types';
import { adminAuthentication, type AuthenticateOptions } from '../admin/auth';
import { ApiError } from '../errors';
import { rememberActor, recordDenied } from './audit-trail';
import { routeAccess } from './route-access';

export type Authorize = (request: FastifyRequest) => Promise<void>;

export interface AuthorizeOptions extends AuthenticateOptions {
  audit: Pick<Store['audit'], 'append'>;
}

/**
 * The onRequest hook of every admin, codec and portal-settings route (issue 32): who the token is,
 * whether the route's scope (route-access.ts) is among its scopes, and a denied attempt (401 or
 * 403) into the audit log. A route with no declared scope is refused to everyone.
 */
export function authorizer(options: AuthorizeOptions): Authorize {
  const authenticate = adminAuthentication(options);
  return async function authorize(request) {
    let actor: Actor | undefined;
    try {
      actor = await authenticate(request);
      const decision = decideAccess(actor.scopes, routeAccess(request.method, request.routeOptions.url)?.scope);
      if (!decision.allow) throw new ApiError(decision.status, 'forbidden', decision.message);
    } catch (err) {
      if (err instanceof ApiError && (err.statusCode === 401 || err.statusCode === 403)) await recordDenied(options.audit, request, actor);
      throw err;
    }
    rememberActor(request, actor);
  };
}

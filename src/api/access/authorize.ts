import type { FastifyRequest } from 'fastify';
import { decideAccess, type Actor } from '../../access/scopes';
import type { Store } from '../../store/types';
import type { Config } from '../../config';
import { adminAuthentication, NoCredentials, type AuthenticateOptions } from '../admin/auth';
import { limitedAddress } from '../client-address';
import { ApiError } from '../errors';
import { rememberActor, recordDenied } from './audit-trail';
import { routeAccess } from './route-access';

export type Authorize = (request: FastifyRequest) => Promise<void>;

export interface AuthorizeOptions extends AuthenticateOptions {
  audit: Pick<Store['audit'], 'append'>;
  /** TRUST_PROXY: the audit rows record the address the failure limiter counts (default: the socket's). */
  trustProxy?: Config['trustProxy'];
}

/**
 * The onRequest hook of every admin, codec and portal-settings route: who the token is,
 * whether the route's scope (route-access.ts) is among its scopes, and a denied attempt (a wrong
 * token, 401, or a missing scope, 403) into the audit log; a request with no credentials is only
 * logged, and an address past its share of wrong tokens is refused (429) before anything is
 * recorded. A route with no declared scope is refused to everyone.
 */
export function authorizer(options: AuthorizeOptions): Authorize {
  const authenticate = adminAuthentication(options);
  return async function authorize(request) {
    let actor: Actor | undefined;
    // Not request.ip: under TRUST_PROXY=true that is the leftmost X-Forwarded-For entry, which the
    // client writes itself.
    const address = limitedAddress(request, options.trustProxy ?? false);
    try {
      actor = await authenticate(request);
      const decision = decideAccess(actor.scopes, routeAccess(request.method, request.routeOptions.url)?.scope);
      if (!decision.allow) throw new ApiError(decision.status, 'forbidden', decision.message);
    } catch (err) {
      // No credentials: a log line (Fastify's request log has the rest), no row.
      if (err instanceof NoCredentials) request.log.info({ address }, 'admin request without credentials refused');
      else if (err instanceof ApiError && (err.statusCode === 401 || err.statusCode === 403)) await recordDenied(options.audit, request, actor, address);
      throw err;
    }
    rememberActor(request, actor, address);
  };
}

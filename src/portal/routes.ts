import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Authorize } from '../api/access/authorize';
import { actorOf } from '../api/access/audit-trail';
import { ApiError } from '../api/errors';
import { PORTAL_BUILD_DIR, buildPortalAssets, type PortalAssets } from './build';

export interface PortalOptions {
  /** The access check shared with the admin API and the codec server (route-access.ts). */
  authorize: Authorize;
  /** Base URL of the Temporal Web UI each delivery links to. */
  temporalUiUrl: string;
  temporalNamespace: string;
  /** PUBLIC_URL: what the analytics.js snippet points at; empty means the portal's own origin. */
  publicUrl: string;
}

/**
 * Nothing but this origin: no CDN, no inline script or style, no framing. The admin token lives in
 * the page's sessionStorage, so an injected script would be the way to steal it; this forbids one.
 */
export const PORTAL_CSP = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

const TYPES: Record<keyof PortalAssets, string> = {
  'index.html': 'text/html; charset=utf-8',
  'portal.js': 'text/javascript; charset=utf-8',
  'portal.css': 'text/css; charset=utf-8',
};

/**
 * Running from source (tsx, Jest) the front end is bundled in memory on first request, so a fresh
 * clone's `npm start` and tests need no build step and never serve a stale one; compiled (the
 * image), it reads what `npm run build` wrote.
 */
function loadAssets(): Promise<PortalAssets> {
  if (__filename.endsWith('.ts')) return buildPortalAssets();
  return (async () => {
    const read = (name: keyof PortalAssets) => readFile(path.join(PORTAL_BUILD_DIR, name));
    return { 'index.html': await read('index.html'), 'portal.js': await read('portal.js'), 'portal.css': await read('portal.css') };
  })();
}

function secured(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', PORTAL_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache');
}

/** The operators' portal at /portal: static front end over the admin API (same Bearer token). */
export const portalRoutes: FastifyPluginAsync<PortalOptions> = async (app, options) => {
  let assets: Promise<PortalAssets> | undefined;
  const asset = async (name: keyof PortalAssets) => {
    assets ??= loadAssets();
    try {
      return (await assets)[name];
    } catch (err) {
      assets = undefined;
      app.log.error({ err }, 'portal assets missing');
      throw new ApiError(503, 'portal_unavailable', 'the portal is not built: run `npm run build`');
    }
  };
  const hide = { schema: { hide: true } };
  app.get('/portal', hide, async (_request, reply) => secured(reply).redirect('/portal/'));
  for (const name of Object.keys(TYPES) as (keyof PortalAssets)[]) {
    const url = name === 'index.html' ? '/portal/' : `/portal/${name}`;
    app.get(url, hide, async (_request, reply) => secured(reply).type(TYPES[name]).send(await asset(name)));
  }
  // What the page needs to know about this deployment, and who is logged in (the token's name and
  // scopes: the page offers only what they open); behind a token like the admin API.
  app.get('/portal/settings.json', { ...hide, onRequest: options.authorize }, async (request, reply) => {
    const { tokenId, name, scopes } = actorOf(request);
    return secured(reply).send({
      temporalUiUrl: options.temporalUiUrl.replace(/\/+$/, ''),
      temporalNamespace: options.temporalNamespace,
      publicUrl: options.publicUrl,
      token: { id: tokenId, name, scopes },
    });
  });
};

import type { ActionsMapping, OutboundAuth } from './types';

/**
 * A destination's outbound secrets (auth, the client certificate) were set for the
 * URLs the destination sent to then. They are write-only, so whoever may edit a destination must not
 * be able to read them by pointing it at a URL of their own: a change that adds a URL the secrets
 * were not set for drops them, unless the same change supplies them again. Removing or reordering
 * URLs keeps them: they still go only where they went. The signing secrets stay: they sign, they are
 * never sent. Webhook header values are replaced with the list (a PATCH gives them again), and
 * mapping header values are kept only for the same mapping name at the same URL (masked-headers.ts).
 */
export interface SecretsReach {
  webhookUrls: readonly string[];
  mappings: readonly Pick<ActionsMapping, 'settings'>[];
  auth: OutboundAuth | null;
}

/** Every URL a destination's auth and client certificate can be presented to. */
export function secretUrls({ webhookUrls, mappings, auth }: SecretsReach): Set<string> {
  return new Set([...webhookUrls, ...mappings.map((mapping) => mapping.settings.url), ...(auth?.type === 'oauth2' ? [auth.tokenUrl] : [])]);
}

/** Whether `after` reaches a URL that `before` did not: the old secrets must then not follow. */
export function reachesNewUrl(before: SecretsReach, after: SecretsReach): boolean {
  const known = secretUrls(before);
  return [...secretUrls(after)].some((url) => !known.has(url));
}

/** What a change keeps of the saved auth and client certificate: each one not supplied again is dropped when the change reaches a new URL. */
export function secretsKept(before: SecretsReach, after: SecretsReach, supplied: { auth: boolean; tls: boolean }): { dropAuth: boolean; dropTls: boolean } {
  const moved = reachesNewUrl(before, after);
  return { dropAuth: moved && !supplied.auth, dropTls: moved && !supplied.tls };
}

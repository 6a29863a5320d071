/**
 * Who may do what: the scopes an admin token carries and the pure decisions over them.
 * Deny by default: a route that declares no scope answers nobody, and no scope implies another
 * (`admin` opens tokens and the audit log, not payloads).
 */
export const SCOPES = ['read', 'payloads:read', 'destinations:write', 'operate', 'regulations', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** Who made a request: a token's id and name; the bootstrap ADMIN_TOKEN has no id. */
export interface Actor {
  tokenId: string | null;
  name: string;
  scopes: readonly Scope[];
}

/** The name the bootstrap token goes by in the audit log; it holds every scope. */
export const BOOTSTRAP_ACTOR: Actor = { tokenId: null, name: 'ADMIN_TOKEN', scopes: SCOPES };

export type AccessDecision = { allow: true } | { allow: false; status: 403; message: string };

/** Whether an actor holding `granted` may use a route that declares `required` (undefined: declares none). */
export function decideAccess(granted: readonly Scope[], required: Scope | undefined): AccessDecision {
  if (required === undefined) return { allow: false, status: 403, message: 'route: declares no scope, so no token may use it' };
  if (granted.includes(required)) return { allow: true };
  return { allow: false, status: 403, message: `Authorization: this token lacks the scope ${required}` };
}

/** A token never mints one with more than it holds: the requested scopes it lacks (none: it may). */
export const scopesBeyond = (granted: readonly Scope[], requested: readonly Scope[]): Scope[] => requested.filter((scope) => !granted.includes(scope));

export type TokenState = 'active' | 'expired';

/** A stored token at `nowMs`: expired from its expiresAt on (401, like an unknown one). */
export const tokenState = (expiresAt: string | null, nowMs: number): TokenState => (expiresAt !== null && Date.parse(expiresAt) <= nowMs ? 'expired' : 'active');

/** lastUsedAt is written at most once per this interval per token and process: a busy token costs no write per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export const lastUsedIsStale = (lastWrittenMs: number | undefined, nowMs: number): boolean => lastWrittenMs === undefined || nowMs - lastWrittenMs >= LAST_USED_RESOLUTION_MS;

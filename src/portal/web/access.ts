import type { Scope } from '../../access/scopes';
// The server's own table (pure data): the portal asks it which scope a route needs, so a button
// and its route can never disagree about who may press it.
import { ROUTE_ACCESS } from '../../api/access/route-access';
import type { PortalSettings } from './api';
import { h } from './dom';

/**
 * A route as route-access.ts keys it: `METHOD /admin/...` with its URL pattern. The table is a
 * plain record, so a typo type-checks: test/unit/portal-route-keys.test.ts reads every route the
 * portal names and fails on one the table lacks (which would disable its button for every token).
 */
export type RouteKey = string;

/** The scope a route needs; a route missing from the table needs one no token has. */
export const scopeOf = (route: RouteKey): Scope | undefined => ROUTE_ACCESS[route]?.scope;

let granted: readonly string[] = [];

/** Set once per login from /portal/settings.json: the scopes every later check reads. */
export function learnScopes(settings: PortalSettings): void {
  granted = settings.token.scopes;
}

/** The scope the logged-in token lacks for this route, or undefined when it may call it. */
export function missingScope(route: RouteKey): Scope | 'none' | undefined {
  const scope = scopeOf(route);
  if (scope === undefined) return 'none';
  return granted.includes(scope) ? undefined : scope;
}

export const may = (route: RouteKey): boolean => missingScope(route) === undefined;

/** Whether the token holds a scope a route asks for beyond its own (a replay's trigger: payloads:read). */
export const holds = (scope: Scope): boolean => granted.includes(scope);

/** Words for a missing scope, the same on every button and page. */
export const needsText = (scope: string) => `Needs the ${scope} scope`;

/**
 * A button for a route: as given when the token may call it; otherwise disabled, saying in its
 * tooltip and in small type beside it which scope it needs (a read-only token sees what it could
 * do, and why it cannot).
 */
export function guarded(route: RouteKey, button: HTMLButtonElement): HTMLElement {
  const missing = missingScope(route);
  if (missing === undefined) return button;
  button.disabled = true;
  button.title = needsText(missing);
  button.dataset.needsScope = missing;
  return h('span', { class: 'guarded' }, button, ' ', h('small', { class: 'needs-scope' }, `needs ${missing}`));
}

/**
 * A form that only changes things: shown when the token may submit it; otherwise one line
 * naming the scope instead (a form that cannot be sent is noise).
 */
export function formFor(route: RouteKey, what: string, form: () => HTMLElement): HTMLElement {
  const missing = missingScope(route);
  if (missing === undefined) return form();
  return h('p', { class: 'muted needs-scope', 'data-needs-scope': missing }, `${what}: ${needsText(missing).toLowerCase()}, which this token lacks.`);
}

/** What a page shows instead of its content when the token may not read it. */
export function forbiddenPage(title: string, scope: string): HTMLElement[] {
  return [
    h('h1', {}, title),
    h('p', { class: 'error forbidden', role: 'alert', 'data-needs-scope': scope }, `This page needs a token with the ${scope} scope. This token has: ${granted.join(', ') || 'no scope'}.`),
  ];
}

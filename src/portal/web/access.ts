import type { Scope } from '../../access/scopes';
import type { PortalSettings } from './api';
import { h } from './dom';
import { missingScopeFor, type RouteKey } from './scope-check';

export type { RouteKey };

let granted: readonly string[] = [];

/** Set once per login from /portal/settings.json: the scopes every later check reads. */
export function learnScopes(settings: PortalSettings): void {
  granted = settings.token.scopes;
}

/** The scope the logged-in token lacks for this route, or undefined when it may call it. */
export const missingScope = (route: RouteKey): Scope | 'none' | undefined => missingScopeFor(granted, route);

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

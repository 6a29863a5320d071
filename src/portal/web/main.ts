import { forbiddenPage, learnScopes, missingScope } from './access';
import { api, ApiFailure, token, type PortalSettings } from './api';
import { field, h, replace } from './dom';
import { showNav } from './nav';
import type { Page } from './page';
import { DEFAULT_SECTION, SECTIONS } from './sections';

const main = document.getElementById('main')!;
const nav = document.getElementById('nav')!;
let settings: PortalSettings | undefined;
let visit = 0;

function logOut(): void {
  token.clear();
  settings = undefined;
  location.hash = '#/login';
  loginPage();
}

/** The login alone: no navigation, no Log out, nothing a token would be needed for. */
function loginPage(problem?: string): void {
  settings = undefined;
  showNav(nav, SECTIONS, undefined, undefined, logOut);
  const input = h('input', { type: 'password', name: 'token', id: 'token', autocomplete: 'current-password', required: true });
  const form = h(
    'form',
    {
      'aria-label': 'Log in',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const value = input.value.trim();
        try {
          settings = await api<PortalSettings>('GET', '/portal/settings.json', undefined, value);
          token.set(value);
          if (!location.hash || location.hash === '#/login') location.hash = `#/${DEFAULT_SECTION.path}`;
          else void render();
        } catch (err) {
          loginPage(err instanceof ApiFailure && err.status === 401 ? 'That admin token is not valid.' : err instanceof ApiFailure && err.status === 403 ? 'That token lacks the read scope the portal needs.' : String(err));
        }
      },
    },
    field('Admin token', input),
    h('button', { type: 'submit' }, 'Log in'),
  );
  replace(main, h('h1', {}, 'Log in'), h('p', { class: 'muted' }, 'An admin token of this Switchyard (swy_…, or its ADMIN_TOKEN); it needs the read scope. It stays in this tab (sessionStorage) and goes only to this server.'), problem && h('p', { class: 'error', role: 'alert' }, problem), form);
  input.focus();
}

async function render(): Promise<void> {
  const thisVisit = ++visit;
  if (!token.get()) return loginPage();
  try {
    settings ??= await api<PortalSettings>('GET', '/portal/settings.json');
  } catch (err) {
    token.clear();
    return loginPage(err instanceof ApiFailure && err.status === 401 ? 'Log in again.' : String(err));
  }
  learnScopes(settings);
  const [path, queryText] = (location.hash.slice(1) || `/${DEFAULT_SECTION.path}`).split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const section = SECTIONS.find((s) => s.path === parts[0]) ?? DEFAULT_SECTION;
  showNav(nav, SECTIONS, settings, section.path, logOut);
  // Each visit draws into its own view: a page still loading when the user moves on writes into a
  // detached element, never over the page that replaced it.
  const view = h('div', { class: 'view' });
  replace(main, view);
  const page: Page = { main: view, settings, query: new URLSearchParams(queryText ?? ''), left: () => visit !== thisVisit };
  const missing = missingScope(section.reads);
  if (missing !== undefined) {
    replace(view, ...forbiddenPage(section.title, missing));
    return;
  }
  replace(view, h('p', {}, 'Loading…'));
  try {
    await section.render(page, parts.slice(1));
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) {
      if (visit !== thisVisit) return;
      token.clear();
      return loginPage('Log in again.');
    }
    if (visit !== thisVisit) return;
    // A route the page reads beyond its own (a 403 names the scope in the API's words).
    if (err instanceof ApiFailure && err.status === 403) replace(view, h('h1', {}, section.title), h('p', { class: 'error forbidden', role: 'alert' }, err.message));
    else replace(view, h('h1', {}, 'Something went wrong'), h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
  }
  if (visit === thisVisit) main.focus();
}

window.addEventListener('hashchange', () => void render());
void render();

import { api, ApiFailure, token, type PortalSettings } from './api';
import { auditPage } from './audit';
import { deliveriesPage, deliveryPage } from './deliveries';
import { destinationsPage } from './destinations';
import { field, h, replace } from './dom';
import type { Page } from './page';
import { personasPage } from './personas';
import { sourcesPage } from './sources';
import { trackingPlansPage } from './tracking-plans';

const main = document.getElementById('main')!;
const nav = document.getElementById('nav')!;
let settings: PortalSettings | undefined;
let visit = 0;

function loginPage(problem?: string): void {
  nav.hidden = true;
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
          if (!location.hash || location.hash === '#/login') location.hash = '#/sources';
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

/** Which token is logged in and what it may do (issue 32); the audit log's link only for the admin scope. */
function showWhoIsLoggedIn({ token: who }: PortalSettings): void {
  document.getElementById('whoami')!.textContent = `${who.name} (${who.scopes.join(', ')})`;
  document.getElementById('audit-link')!.hidden = !who.scopes.includes('admin');
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
  nav.hidden = false;
  showWhoIsLoggedIn(settings);
  const [path, queryText] = (location.hash.slice(1) || '/sources').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  for (const link of nav.querySelectorAll('a')) link.toggleAttribute('aria-current', link.getAttribute('href') === `#/${parts[0]}`);
  nav.querySelectorAll('a[aria-current]').forEach((link) => link.setAttribute('aria-current', 'page'));
  const page: Page = { main, settings, query: new URLSearchParams(queryText ?? ''), left: () => visit !== thisVisit };
  replace(main, h('p', {}, 'Loading…'));
  try {
    if (parts[0] === 'destinations') await destinationsPage(page);
    else if (parts[0] === 'deliveries' && parts.length === 3) await deliveryPage(page, parts[1], parts[2]);
    else if (parts[0] === 'deliveries') await deliveriesPage(page);
    else if (parts[0] === 'personas') await personasPage(page);
    else if (parts[0] === 'audit') await auditPage(page);
    else if (parts[0] === 'tracking-plans') await trackingPlansPage(page);
    else await sourcesPage(page);
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) {
      token.clear();
      return loginPage('Log in again.');
    }
    if (visit === thisVisit) replace(main, h('h1', {}, 'Something went wrong'), h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
  }
  main.focus();
}

document.getElementById('logout')!.addEventListener('click', () => {
  token.clear();
  settings = undefined;
  location.hash = '#/login';
  loginPage();
});
window.addEventListener('hashchange', () => void render());
void render();

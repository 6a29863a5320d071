import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { PORTAL_CSP, portalRoutes } from '../../src/portal/routes';
import { authorizer } from '../../src/api/access/authorize';

/** The portal's routes on their own (no store, no Temporal): what they serve and with which headers. */
const TOKEN = 'unit-admin-token-0123456789abcdef';
let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify();
  // No store here: no swy_ token is ever found, and denied attempts go nowhere.
  const authorize = authorizer({ adminToken: TOKEN, tokens: { findBySecret: async () => undefined, touch: async () => undefined }, audit: { append: async (entry) => ({ id: 'adt_unit', ...entry }) } });
  await app.register(portalRoutes, { authorize, temporalUiUrl: 'https://temporal.example.com/', temporalNamespace: 'prod', publicUrl: '' });
  await app.ready();
});

afterAll(() => app.close());

it.each([
  ['/portal/', 'text/html'],
  ['/portal/portal.js', 'text/javascript'],
  ['/portal/portal.css', 'text/css'],
])('serves %s as %s with the strict Content-Security-Policy', async (url, type) => {
  const response = await app.inject({ method: 'GET', url });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toContain(type);
  expect(response.headers['content-security-policy']).toBe(PORTAL_CSP);
  expect(response.headers['x-content-type-options']).toBe('nosniff');
});

it('allows nothing from another origin and no inline script', () => {
  const directives = Object.fromEntries(PORTAL_CSP.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
  expect(directives['default-src']).toEqual(["'self'"]);
  expect(directives['frame-ancestors']).toEqual(["'none'"]);
  expect(PORTAL_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
});

it('the page loads only same-origin files: no CDN, no inline script or style', async () => {
  const html = (await app.inject({ method: 'GET', url: '/portal/' })).body;
  const references = [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
  expect(references.filter((ref) => !ref.startsWith('#/')).sort()).toEqual(['/portal/portal.css', '/portal/portal.js', 'data:,']);
  expect(html).not.toMatch(/<script>|<style|\sstyle="|\son\w+="/);
  // The bundle names no other origin either (the SVG namespace is an identifier, not a request).
  const script = (await app.inject({ method: 'GET', url: '/portal/portal.js' })).body;
  // The actions destination's sample mapping is text put in a text area, never requested (portal/web/mappings.ts).
  const notRequests = ['http://www.w3.org/2000/svg', 'https://hooks.slack.com/services/T000/B000/XXXX'];
  expect(script.match(/https?:\/\/[^\s'"`]+/g)?.filter((url) => !notRequests.includes(url)) ?? []).toEqual([]);
});

it('redirects /portal to /portal/', async () => {
  const response = await app.inject({ method: 'GET', url: '/portal' });
  expect(response.statusCode).toBe(302);
  expect(response.headers.location).toBe('/portal/');
});

it('gives the page its settings only with the admin token', async () => {
  expect((await app.inject({ method: 'GET', url: '/portal/settings.json' })).statusCode).toBe(401);
  expect((await app.inject({ method: 'GET', url: '/portal/settings.json', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
  const response = await app.inject({ method: 'GET', url: '/portal/settings.json', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.statusCode).toBe(200);
  expect(response.json()).toEqual({ temporalUiUrl: 'https://temporal.example.com', temporalNamespace: 'prod', publicUrl: '', token: { id: null, name: 'ADMIN_TOKEN', scopes: ['read', 'payloads:read', 'destinations:write', 'operate', 'regulations', 'admin'] } });
});

it('the front end never turns text into markup (no innerHTML and the like), so no API value can inject a script', () => {
  const dir = path.join(__dirname, '..', '..', 'src', 'portal', 'web');
  const sources = readdirSync(dir).filter((name) => name.endsWith('.ts'));
  expect(sources.length).toBeGreaterThan(3);
  for (const name of sources) expect(`${name}: ${readFileSync(path.join(dir, name), 'utf8')}`).not.toMatch(/\.innerHTML|\.outerHTML|insertAdjacentHTML\(|document\.write|\beval\(|new Function/);
});

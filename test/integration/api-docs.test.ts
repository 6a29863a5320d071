import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import type { Browser, Page } from 'playwright-core';
import { ROUTE_ACCESS } from '../../src/api/access/route-access';
import { ROUTE_EXPOSURE } from '../../src/api/access/route-exposure';
import { compileEverySchema } from '../../src/api/lazy-schema-compilers';
import { launchChromium, listenForBrowser } from '../helpers/browser';
import { ROOT, waitFor } from '../helpers/processes';
import { useSystem, type TestSystem } from '../helpers/system';

/**
 * The API reference: /openapi.json documents every operation (a summary, what each
 * error means, one example request and response that pass their own schemas), and /docs shows
 * every one of them in a real headless Chromium without a request leaving the API's origin.
 * The page is photographed into docs/api-screenshots/ for docs/api.md.
 */
interface Media {
  schema?: object;
  example?: unknown;
}
interface Operation {
  summary?: string;
  description?: string;
  security?: unknown[];
  'x-switchyard-scope'?: string;
  'x-switchyard-reveals'?: string;
  'x-switchyard-reveals-with-payloads-read'?: string;
  tags?: string[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
}
type OpenApi = { paths: Record<string, Record<string, Operation>> };

let system: TestSystem;
let apiDocument: OpenApi;
let browser: Browser;
let page: Page;
let origin: string;
/** Every URL the browser asked for while showing /docs. */
const requested: string[] = [];
const pageErrors: string[] = [];

useSystem((s) => (system = s));

beforeAll(async () => {
  apiDocument = (await system.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApi>();
  origin = await listenForBrowser(system);
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.on('request', (request) => requested.push(request.url()));
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
});

afterAll(async () => {
  await browser?.close();
});

const operations = () => Object.entries(apiDocument.paths).flatMap(([route, methods]) => Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${route}`, operation })));
const json = (content?: Record<string, Media>) => content?.['application/json'];

it('compiles every route\'s request and reply schemas (each is compiled on its route\'s first call, so a broken one must fail here)', () => {
  // Every operation has at least a reply schema; most have request schemas too.
  expect(compileEverySchema()).toBeGreaterThan(operations().length);
  expect(compileEverySchema()).toBe(0);
});

it('documents every operation with a summary, a tag and what each of its errors means', () => {
  expect(operations().length).toBeGreaterThan(50);
  for (const { key, operation } of operations()) {
    expect({ key, summary: Boolean(operation.summary), tags: operation.tags?.length }).toEqual({ key, summary: true, tags: 1 });
    for (const [status, reply] of Object.entries(operation.responses)) {
      if (Number(status) >= 400) expect({ key, status, description: reply.description }).not.toEqual({ key, status, description: 'Default Response' });
    }
  }
});

it('names, on every guarded operation, the scope it needs and what it can reveal of user data, as the access tables do', () => {
  const guarded = operations().filter(({ operation }) => operation.security !== undefined);
  expect(guarded.length).toBeGreaterThan(50);
  for (const { key, operation } of guarded) {
    // OpenAPI's `{id}` is Fastify's `:id`; `/codec/{*}` is `/codec/*`.
    const route = key.replace(/\{\*\}/g, '*').replace(/\{(\w+)\}/g, ':$1');
    const exposure = ROUTE_EXPOSURE[route];
    expect({ route, scope: operation['x-switchyard-scope'], reveals: operation['x-switchyard-reveals'], withPayloadsRead: operation['x-switchyard-reveals-with-payloads-read'] }).toEqual({
      route,
      scope: ROUTE_ACCESS[route]?.scope,
      reveals: exposure?.reveals,
      withPayloadsRead: exposure?.withPayloadsRead,
    });
    expect(operation.description).toContain(`Reveals of user data: ${exposure.reveals}`);
  }
});

it('gives every operation one example request (when it takes a body) and response, each valid against its own schema', () => {
  // OpenAPI 3.0 schemas: `nullable` and `example` are its keywords, formats are only annotations here.
  const ajv = new Ajv({ strict: false, validateFormats: false });
  const invalid: string[] = [];
  const check = (key: string, what: string, media?: Media) => {
    if (media?.example === undefined) return invalid.push(`${key}: no example ${what}`);
    if (media.schema && !ajv.validate(media.schema, media.example)) invalid.push(`${key} ${what}: ${ajv.errorsText()}`);
  };
  for (const { key, operation } of operations()) {
    if (operation.requestBody) check(key, 'request', json(operation.requestBody.content));
    const success = Object.keys(operation.responses).find((status) => status.startsWith('2'))!;
    if (success !== '204') check(key, `${success} response`, json(operation.responses[success].content));
  }
  expect(invalid).toEqual([]);
});

it('/docs lists every route of /openapi.json in Chromium, and no request leaves the API', async () => {
  const expected = operations().map(({ key }) => key);
  await page.goto(`${origin}/docs`);
  // Swagger UI renders one block per operation once it has fetched and parsed the document.
  // Counted through the locator: a string predicate is evaluated in the page, whose CSP forbids eval.
  await waitFor(async () => {
    const shown = await page.locator('.opblock').count();
    if (shown < expected.length) throw new Error(`${shown} of ${expected.length} operations rendered`);
  }, 30_000);
  const methods = await page.locator('.opblock .opblock-summary-method').allTextContents();
  const paths = await page.locator('.opblock .opblock-summary-path').evaluateAll((elements) => elements.map((element) => element.getAttribute('data-path') ?? ''));
  const shown = methods.map((method, i) => `${method} ${paths[i]}`);
  expect(shown.sort()).toEqual(expected.sort());

  const screenshots = path.join(ROOT, 'docs', 'api-screenshots');
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: path.join(screenshots, 'docs.png') });

  expect(requested.length).toBeGreaterThan(0);
  expect(requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual([]);
  expect(pageErrors).toEqual([]);
});

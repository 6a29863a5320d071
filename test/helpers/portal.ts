import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, listenForBrowser } from './browser';
import { ROOT } from './processes';
import type { Receiver } from './receiver';
import { ADMIN_TOKEN, useSystem, type TestSystem } from './system';

/** What a portal test drives: the real system, its receiver, the API's origin and a page in a real Chromium. */
export interface PortalRun {
  system: TestSystem;
  receiver: Receiver;
  origin: string;
  browser: Browser;
  page: Page;
  /** Uncaught errors of the page. */
  pageErrors: string[];
}

/** Starts the system and a headless Chromium for this file; the run's parts are filled in before the first test. */
export function usePortal(): PortalRun {
  const run = { pageErrors: [] as string[] } as PortalRun;
  // Jest runs afterAll hooks in the order they are declared: the browser closes before the system,
  // so the API's close finds no connection of a page still loading (one left mid-request stays
  // open, idle, for the server's keep-alive timeout: over a minute).
  afterAll(async () => {
    await run.browser?.close();
  });
  useSystem((system, receiver) => Object.assign(run, { system, receiver }));
  beforeAll(async () => {
    run.origin = await listenForBrowser(run.system);
    run.browser = await launchChromium();
    run.page = await (await run.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    run.page.on('pageerror', (error) => run.pageErrors.push(error.message));
  });
  return run;
}

/** Checks until true (or fails after 30 s, naming what it waited for). */
export async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Logs this page in with a token (the admin token by default), unless it is logged in already. */
export async function logIn(page: Page, origin: string, token = ADMIN_TOKEN): Promise<void> {
  await page.goto(`${origin}/portal/`);
  if (await page.evaluate<boolean>("sessionStorage.getItem('switchyard.adminToken') !== null")) return;
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('#whoami').waitFor();
}

/** Logs in and opens a source's list of destinations. */
export async function openDestinations(page: Page, origin: string, sourceId: string): Promise<void> {
  await logIn(page, origin);
  await page.goto(`${origin}/portal/#/destinations?source=${sourceId}`);
  await page.locator('table.destinations, main p').first().waitFor();
}

/** Logs in and opens a destination's page with these panels open (the others stay closed, as a visitor finds them). */
export async function openDestination(page: Page, origin: string, destinationId: string, panels: string[] = []): Promise<void> {
  await logIn(page, origin);
  await page.goto(`${origin}/portal/#/destinations/${destinationId}${panels.length ? `?open=${panels.join(',')}` : ''}`);
  await page.locator(`section[data-destination-id="${destinationId}"]`).waitFor();
}

/** docs/portal/: the pages as the tests saw them, for docs/portal.md. */
export const PORTAL_SCREENSHOTS = path.join(ROOT, 'docs', 'portal');

/** Photographs the whole page into docs/portal/<name>.png (each file its own names: files may run at once). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(PORTAL_SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(PORTAL_SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * Where the page shows an id bare although it has a name: each text that holds a known id, unless the
 * name stands beside it (within the id's table cell, list item, line or `.named`; for an id in small
 * type, within its section, under the heading that names it). An id inside a Temporal workflow id
 * (`message:src_…:…`) is part of that id, not a source shown. Returns "id in «context»" per offence,
 * so `toEqual([])` names the place. Runs in the page (a string: the tests compile without the DOM's types).
 */
export async function bareIds(page: Page, names: Record<string, string>): Promise<string[]> {
  return page.evaluate(`(${BARE_IDS_IN_PAGE})(${JSON.stringify(names)})`);
}

const BARE_IDS_IN_PAGE = `(known) => {
  const offences = [];
  const main = document.querySelector('main') || document.body;
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  const near = 'td, th, li, p, dd, dt, h1, h2, h3, h4, label, option, summary, .named, figcaption, caption';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = (node.textContent || '').replace(/message:\\S+/g, '');
    const parent = node.parentElement;
    if (!parent || parent.closest('[hidden], template, script, style, textarea, pre')) continue;
    for (const [id, name] of Object.entries(known)) {
      if (!text.includes(id)) continue;
      const place = (parent.matches('small.id') ? parent.closest('section, td, li, .named') : parent.closest(near)) || parent;
      const context = (place.textContent || '').replace(/\\s+/g, ' ').trim();
      if (!context.includes(name)) offences.push(id + ' in «' + context.slice(0, 120) + '»');
    }
  }
  return offences;
}`;

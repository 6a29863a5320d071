import type { Browser, Page } from 'playwright-core';
import { launchChromium, listenForBrowser } from './browser';
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
  useSystem((system, receiver) => Object.assign(run, { system, receiver }));
  beforeAll(async () => {
    run.origin = await listenForBrowser(run.system);
    run.browser = await launchChromium();
    run.page = await (await run.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    run.page.on('pageerror', (error) => run.pageErrors.push(error.message));
  });
  afterAll(async () => {
    await run.browser?.close();
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

/** Logs in with the admin token and opens a source's destinations. */
export async function openDestinations(page: Page, origin: string, sourceId: string): Promise<void> {
  await page.goto(`${origin}/portal/`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Sources' }).waitFor();
  await page.goto(`${origin}/portal/#/destinations?source=${sourceId}`);
}

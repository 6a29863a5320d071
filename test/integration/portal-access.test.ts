import type { Browser, Page } from 'playwright-core';
import { launchChromium, listenForBrowser } from '../helpers/browser';
import { ADMIN_TOKEN, useSystem, type TestSystem } from '../helpers/system';

/**
 * Issue 32 in the portal, in a real headless Chromium on the real API: any token logs in, the page
 * says which one and what it may do, and the audit log is a page for a token with the admin scope.
 */
let system: TestSystem;
let origin: string;
let browser: Browser;

useSystem((s) => {
  system = s;
});

beforeAll(async () => {
  origin = await listenForBrowser(system);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function mint(name: string, scopes: string[]): Promise<string> {
  const reply = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name, scopes } });
  expect(reply.statusCode).toBe(201);
  return reply.json<{ token: string }>().token;
}

async function logIn(token: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${origin}/portal/`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('#whoami').filter({ hasText: /\S/ }).waitFor();
  return page;
}

it('logs a read token in, names it and its scopes, and offers no audit log', async () => {
  const page = await logIn(await mint('Support desk', ['read']));
  await expect(page.locator('#whoami').textContent()).resolves.toBe('Support desk (read)');
  await expect(page.getByRole('link', { name: 'Audit log' }).isVisible()).resolves.toBe(false);
  await page.getByRole('heading', { name: 'Sources' }).waitFor();
});

it('refuses a token without the read scope at the login, naming the scope', async () => {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${origin}/portal/`);
  await page.getByLabel('Admin token').fill(await mint('Codec only', ['payloads:read']));
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('alert').textContent()).resolves.toContain('lacks the read scope');
});

it('shows an admin the audit log, newest first, filtered by action', async () => {
  await mint('Listed in the log', ['read']);
  const page = await logIn(await mint('Auditor', ['read', 'admin']));
  await expect(page.locator('#whoami').textContent()).resolves.toBe('Auditor (read, admin)');
  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.getByRole('heading', { name: 'Audit log' }).waitFor();
  await page.getByLabel('Action').fill('token.create');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.locator('tr[data-audit-id]').first().waitFor();
  const actions = await page.locator('tr[data-audit-id] td:nth-child(3)').allTextContents();
  expect(new Set(actions)).toEqual(new Set(['token.create']));
  await expect(page.locator('tr[data-audit-id]').first().textContent()).resolves.toContain('ADMIN_TOKEN');
});

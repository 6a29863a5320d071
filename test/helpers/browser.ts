import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import type { TestSystem } from './system';

/** Debian's Chromium, driven by playwright-core (Playwright's own browser download fails here). */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A real headless Chromium; a machine without it fails loudly with how to get it (never a skip). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: this test drives a real Chromium. Install it with \`sudo apt-get install -y chromium\` (CI installs it in .ci/run).`);
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/**
 * Puts the in-process API on a real loopback port, for a browser: its origin. Its close drains as
 * the served API's does (src/api/serve.ts), with a test-sized limit: a page's connection that was
 * mid-request when the close began stays open, idle, for the server's keep-alive timeout (72 s)
 * unless it is cut, longer than a test hook waits.
 */
export async function listenForBrowser(system: TestSystem): Promise<string> {
  await system.app.listen({ port: 0, host: '127.0.0.1' });
  const close = system.close.bind(system);
  system.close = async () => {
    const cut = setTimeout(() => system.app.server.closeAllConnections(), BROWSER_DRAIN_LIMIT_MS);
    try {
      await close();
    } finally {
      clearTimeout(cut);
    }
  };
  return `http://127.0.0.1:${(system.app.server.address() as AddressInfo).port}`;
}

const BROWSER_DRAIN_LIMIT_MS = 1_000;

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium, listenForBrowser } from '../helpers/browser';
import type { Receiver } from '../helpers/receiver';
import { deliveryResult, sourceWithDestination, startSystem, useSystem, type TestSystem } from '../helpers/system';

/**
 * Segment's browser library (analytics-next, loaded from node_modules: no CDN) in a real headless
 * Chromium, on a page served from another origin than the API, with `cdnURL` = Switchyard: it loads
 * its settings from the API, answers CORS preflights, and posts to the short routes or /v1/b.
 */
const BUNDLE = require.resolve('@segment/analytics-next/dist/umd/index.js');

let system: TestSystem;
let receiver: Receiver;
let apiOrigin: string;
let pageOrigin: string;
let pageServer: http.Server;
let browser: Browser | undefined;
/** Requests the page server got for anything but the page and the bundle (a lazily loaded chunk would show here). */
const strayPageRequests: string[] = [];

useSystem((s, r) => {
  system = s;
  receiver = r;
});

beforeAll(async () => {
  apiOrigin = await listenForBrowser(system);
  const bundle = readFileSync(BUNDLE);
  pageServer = http.createServer((req, res) => {
    if (req.url === '/analytics-next.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    if (req.url?.startsWith('/shop')) {
      return res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><head><title>Shop</title><link rel="icon" href="data:,"><script src="/analytics-next.js"></script></head><body>Shop</body></html>');
    }
    strayPageRequests.push(req.url ?? '');
    res.writeHead(404).end();
  });
  await new Promise<void>((listening) => pageServer.listen(0, '127.0.0.1', listening));
  // Another port is another origin: every call from the page to the API is cross-origin.
  pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((closed) => (pageServer ? pageServer.close(closed) : closed(undefined)));
});

type Strategy = { strategy: 'standard' } | { strategy: 'batching'; config: { size: number; timeout: number } };

/** Opens the shop page in a fresh browser context, loads analytics-next against Switchyard and makes the four calls (page, alias, identify, track); returns their messageIds and what the page sent where. */
async function browse(writeKey: string, deliveryStrategy: Strategy) {
  const context = await browser!.newContext();
  const page = await context.newPage();
  const sent: string[] = [];
  page.on('request', (request) => sent.push(`${request.method()} ${request.url()}`));
  const consoleErrors: string[] = [];
  page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
  await page.goto(`${pageOrigin}/shop/cart?coupon=SPRING`);
  const messageIds = await page.evaluate(
    async ({ writeKey, cdnURL, deliveryStrategy }) => {
      const { AnalyticsBrowser } = (globalThis as unknown as { AnalyticsNext: { AnalyticsBrowser: any } }).AnalyticsNext;
      const analytics = AnalyticsBrowser.load({ writeKey, cdnURL }, { integrations: { 'Segment.io': { deliveryStrategy } } });
      const contexts = [
        await analytics.page('Cart', { step: 1 }),
        // Alias as a sign-up does, before identify: the library aliases its anonymousId to the new userId
        // (after identify it would send its current userId as both ids).
        await analytics.alias('web-user'),
        await analytics.identify('web-user', { plan: 'Premium' }),
        await analytics.track('Order Completed', { total: 42 }),
      ];
      return contexts.map((ctx: { event: { messageId: string } }) => ctx.event.messageId);
    },
    { writeKey, cdnURL: apiOrigin, deliveryStrategy },
  );
  return { messageIds, sent, consoleErrors, close: () => context.close() };
}

async function expectDeliveredOnceFromTheBrowser(sourceId: string, messageIds: string[]) {
  for (const messageId of messageIds) {
    expect(await deliveryResult(system.client, sourceId, messageId)).toMatchObject({ ok: true });
  }
  const bodies = messageIds.map((messageId) => {
    const copies = receiver.requests.filter((r) => (JSON.parse(r.body) as { messageId?: string }).messageId === messageId);
    expect(copies).toHaveLength(1);
    return JSON.parse(copies[0].body) as Record<string, any>;
  });
  expect(bodies.map((b) => b.type)).toEqual(['page', 'alias', 'identify', 'track']);
  for (const body of bodies) {
    expect(body.context).toMatchObject({
      page: { path: '/shop/cart', url: `${pageOrigin}/shop/cart?coupon=SPRING`, search: '?coupon=SPRING', title: 'Shop' },
      userAgent: expect.stringContaining('HeadlessChrome'),
      ip: '127.0.0.1',
      library: { name: 'analytics.js' },
    });
  }
  expect(bodies[0]).toMatchObject({ name: 'Cart', properties: { step: 1 } });
  expect(bodies[0].anonymousId).toEqual(expect.any(String));
  expect(bodies[1]).toMatchObject({ userId: 'web-user', previousId: bodies[0].anonymousId });
  expect(bodies[2]).toMatchObject({ userId: 'web-user', traits: { plan: 'Premium' } });
  expect(bodies[3]).toMatchObject({ userId: 'web-user', event: 'Order Completed', properties: { total: 42 } });
}

it.each([
  ['the standard delivery strategy (one request per call, to /v1/p, /v1/a, /v1/i, /v1/t)', { strategy: 'standard' } satisfies Strategy, ['/v1/p', '/v1/a', '/v1/i', '/v1/t']],
  ['the batching delivery strategy (one /v1/b request)', { strategy: 'batching', config: { size: 4, timeout: 500 } } satisfies Strategy, ['/v1/b']],
])('page, alias, identify and track from analytics-next in Chromium are each delivered once, with context.page, userAgent and ip, with %s', async (_name, strategy, paths) => {
  const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
  const browsing = await browse(writeKey, strategy);
  try {
    await expectDeliveredOnceFromTheBrowser(source.id, browsing.messageIds);
    // The library talked to nobody but the page and Switchyard: settings, then the calls (no Segment CDN, API or metrics).
    const apiRequests = browsing.sent.filter((line) => line.includes(apiOrigin)).map((line) => line.replace(apiOrigin, ''));
    expect(apiRequests).toEqual([`GET /v1/projects/${writeKey}/settings`, ...paths.map((path) => `POST ${path}`)]);
    expect(browsing.sent.filter((line) => !line.includes(apiOrigin) && !line.includes(pageOrigin))).toEqual([]);
    expect(strayPageRequests).toEqual([]);
    expect(browsing.consoleErrors).toEqual([]);
  } finally {
    await browsing.close();
  }
});

describe('CORS answers only the browser routes', () => {
  const origin = 'https://shop.example.com';
  const preflight = (url: string, app = system.app) =>
    app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' } });

  it.each(['/v1/t', '/v1/b', '/v1/track', '/v1/batch', '/v1/projects/any/settings'])('preflight of %s is allowed for any origin by default', async (url) => {
    const response = await preflight(url);
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['access-control-allow-headers']).toBe('content-type,authorization');
  });

  it.each(['/admin/sources', '/health', '/openapi.json'])('preflight of %s gets no CORS headers and a 404', async (url) => {
    const response = await preflight(url);
    expect(response.statusCode).toBe(404);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.json()).toMatchObject({ code: 'not_found' });
  });

  it('an admin request from a page carries no CORS headers', async () => {
    const response = await system.app.inject({ method: 'GET', url: '/admin/sources', headers: { origin, authorization: 'Bearer nope' } });
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('CORS_ORIGINS as a list allows exactly those origins', async () => {
    const listed = await startSystem({ corsOrigins: ['https://shop.example.com', 'http://localhost:3000'] });
    try {
      const allowed = await preflight('/v1/t', listed.app);
      expect(allowed.headers['access-control-allow-origin']).toBe(origin);
      expect(allowed.headers.vary).toContain('Origin');
      const other = await listed.app.inject({ method: 'OPTIONS', url: '/v1/t', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await listed.close();
    }
  });
});

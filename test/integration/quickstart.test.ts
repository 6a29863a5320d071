import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { verifySignature } from '../../src/delivery/signature';
import { launchChromium } from '../helpers/browser';
import { freePort } from '../helpers/ports';
import { npmStart, stopNpmStart, type Started } from '../helpers/npm-start';
import { ROOT, waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { basicAuth } from '../helpers/system';
import { VERSION } from '../../src/version';

/**
 * `npm start` as a user runs it: its own Temporal dev server, worker and API in one process, on an
 * empty data folder, printing what the quick start needs; a message sent with the printed write key
 * reaches a webhook, its workflow started eagerly (the first workflow task came back in the start reply).
 */

/** A Prometheus counter's total over all its label sets; 0 when the server never recorded it. */
async function counter(metricsUrl: string, name: string): Promise<number> {
  const text = await (await request(metricsUrl)).body.text();
  const line = new RegExp(`^${name}(?:_total)?(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'gm');
  return [...text.matchAll(line)].reduce((sum, m) => sum + Number(m[1]), 0);
}

describe('npm start (quick start)', () => {
  let dataDir: string;
  let receiver: Receiver;
  let started: Started | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-quickstart-'));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await stopNpmStart(started);
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a write key and admin token that work, delivers signed with eager workflow starts, stops cleanly and keeps its keys', async () => {
    const ports = { api: await freePort(), temporal: await freePort(), ui: await freePort() };
    started = await npmStart(dataDir, ports);
    const { adminToken, writeKey, sourceId, api, metrics } = started.banner;
    expect(started.output()).toContain(`Temporal Web UI http://localhost:${ports.ui}/namespaces/default/workflows`);
    // Quiet start: stdout is a pipe here, so at the default level no webpack stats and no
    // warning for the activity-only slow lanes; the bundle's one line stays.
    expect(started.output()).toContain('Workflow bundle created');
    expect(started.output()).not.toMatch(/webpack|asset workflow-bundle|No workflows registered|No Nexus services registered/);
    // The printed destination is the local receiver the banner says to start (npm run receiver).
    expect(started.output()).toContain('npm run receiver -- --port 9000 --secret change-me');
    expect(started.output()).toContain('"sharedSecret":"change-me","webhooks":[{"url":"http://127.0.0.1:9000/hook"}]');
    // The portal works from a fresh checkout: run from source, the API bundles its front end itself.
    expect(started.output()).toContain(`Portal          ${api}/portal`);
    // One version (CHANGELOG.md): printed at start, answered by /health.
    expect(started.output()).toContain(`Version         ${VERSION}`);
    expect(await (await fetch(`${api}/health`)).json()).toMatchObject({ version: VERSION });
    const portalScript = await fetch(`${api}/portal/portal.js`);
    expect(portalScript.status).toBe(200);
    expect(portalScript.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect((await portalScript.text()).length).toBeGreaterThan(1000);

    const destination = await request(`${api}/admin/sources/${sourceId}/destinations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true, sharedSecret: 'quickstart-secret', webhooks: [{ url: receiver.url }] }),
    });
    expect(destination.statusCode).toBe(201);
    await destination.body.dump();

    const eagerBefore = await counter(metrics, 'workflow_eager_execution');
    const deniedBefore = await counter(metrics, 'workflow_eager_execution_denied');
    const messageIds = ['qs-1', 'qs-2', 'qs-3'];
    for (const messageId of messageIds) {
      const sent = await request(`${api}/v1/track`, {
        method: 'POST',
        headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' },
        body: JSON.stringify({ messageId, userId: 'u1', event: 'Order Completed', properties: { total: 42 } }),
      });
      expect(sent.statusCode).toBe(200);
      await sent.body.dump();
    }
    for (const messageId of messageIds) {
      const received = await receiver.waitForMessage(messageId, 60_000);
      expect(verifySignature('quickstart-secret', received.body, String(received.headers['x-signature']))).toBe(true);
    }
    // Every start asked for eager execution and Temporal granted at least one (a start finding the
    // worker's slots busy is denied and goes through the task queue, which is allowed). The server
    // publishes its counters periodically, hence the wait.
    await waitFor(async () => {
      const eager = (await counter(metrics, 'workflow_eager_execution')) - eagerBefore;
      if (eager !== messageIds.length) throw new Error(`${eager} eager starts counted so far`);
    }, 30_000);
    expect((await counter(metrics, 'workflow_eager_execution_denied')) - deniedBefore).toBeLessThan(messageIds.length);

    // Payloads are encrypted under the development key npm start made in its data folder, and its Web
    // UI decodes them through the API's codec server: a newcomer sees the delivery's input.
    expect(readFileSync(path.join(dataDir, 'payload-keys'), 'utf8')).toMatch(/^dev-1=/m);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      await page.goto(`http://localhost:${ports.ui}/namespaces/default/workflows/${encodeURIComponent(deliveryWorkflowId(sourceId, 'qs-1'))}`);
      // The summary names no event or user (the body is sealed under the user's data key); the input shows the opened body.
      await page.getByText('track · sealed → 1 destination').first().waitFor({ timeout: 60_000 });
      await page.getByText('"total"').first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: path.join(ROOT, 'docs', 'privacy-screenshots', 'web-ui-decoded-input.png'), fullPage: true });
    } finally {
      await browser.close();
    }

    started.process.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => started!.process.once('exit', resolve));
    expect(code).toBe(0);
    // The embedded dev server went with it: its port is free again.
    await waitFor(async () => {
      const probe = await fetch(`${metrics}`).then(() => 'up', () => 'down');
      if (probe === 'up') throw new Error('dev server still answering');
    }, 30_000);

    // A restart on the same folder prints the same write key (keys are stored hashed: the folder's
    // quickstart.json is the only copy) and finds the same Temporal data.
    started = await npmStart(dataDir, { ...ports, api: await freePort() });
    expect(started.banner.writeKey).toBe(writeKey);
    expect(started.banner.sourceId).toBe(sourceId);
  }, 360_000);
});

import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { connectSqlite } from '../../src/store/connection';
import { waitFor } from '../helpers/processes';
import type { ReceivedRequest, Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';

let system: TestSystem;
let receiver: Receiver;
useSystem((s, r) => {
  system = s;
  receiver = r;
});
beforeEach(() => receiver.respond(() => ({ status: 200 })));

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const patch = (id: string, payload: Record<string, unknown>) => system.app.inject({ method: 'PATCH', url: `/admin/destinations/${id}`, headers: auth, payload });

/** What a receiver built on the `standardwebhooks` package does with a request. */
function verifies(secret: string, request: ReceivedRequest): boolean {
  try {
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

async function deliverOne(writeKey: string, sourceId: string, messageId: string): Promise<ReceivedRequest> {
  await send(system.app, writeKey, 'track', { userId: 'u', event: 'Signed', messageId });
  expect(await deliveryResult(system.client, sourceId, messageId)).toMatchObject({ ok: true });
  return receiver.waitForMessage(messageId);
}

describe('Standard Webhooks signing (optional, per destination)', () => {
  it('signs so that the standardwebhooks package verifies, alongside the seed X-Signature', async () => {
    const secret = newSecret();
    const { source, writeKey } = await sourceWithDestination(system.store, { sharedSecret: 'seed-secret', signingSecret: secret, webhooks: [{ url: receiver.url, headers: {} }] });
    const request = await deliverOne(writeKey, source.id, 'sw-1');
    expect(verifies(secret, request)).toBe(true);
    expect(verifies(newSecret(), request)).toBe(false);
    expect(request.headers['webhook-id']).toBe('sw-1');
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(request.headers['x-signature']).toMatch(/^[0-9a-f]{40}$/);
  });

  it('sends no webhook-* headers when the destination has no signing secret', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const request = await deliverOne(writeKey, source.id, 'sw-none');
    expect(Object.keys(request.headers).filter((h) => h.startsWith('webhook-'))).toEqual([]);
  });

  it('keeps webhook-id across retries, and every attempt verifies', async () => {
    const secret = newSecret();
    const { source, writeKey } = await sourceWithDestination(system.store, { signingSecret: secret, webhooks: [{ url: receiver.url, headers: {} }] });
    receiver.respond((request) => ({ status: receiver.requests.filter((r) => r.body === request.body).length < 2 ? 503 : 200 }));
    await send(system.app, writeKey, 'track', { userId: 'u', event: 'Signed', messageId: 'sw-retry' });
    expect(await deliveryResult(system.client, source.id, 'sw-retry')).toMatchObject({ ok: true, report: { destinations: [{ rounds: 2 }] } });
    const attempts = receiver.requests.filter((r) => JSON.parse(r.body).messageId === 'sw-retry');
    expect(attempts).toHaveLength(2);
    expect(attempts.map((a) => a.headers['webhook-id'])).toEqual(['sw-retry', 'sw-retry']);
    expect(attempts.every((a) => verifies(secret, a))).toBe(true);
  });

  it('gives a messageId that cannot travel in a header a stable digest as webhook-id', async () => {
    const secret = newSecret();
    const { source, writeKey } = await sourceWithDestination(system.store, { signingSecret: secret, webhooks: [{ url: receiver.url, headers: {} }] });
    const request = await deliverOne(writeKey, source.id, 'ünïcode id\twith tab');
    expect(request.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
    expect(verifies(secret, request)).toBe(true);
  });

  it('rotates: the previous secret keeps verifying for the overlap, then only the new one does', async () => {
    const [before, after] = [newSecret(), newSecret()];
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { signingSecret: before, webhooks: [{ url: receiver.url, headers: {} }] });
    expect(verifies(before, await deliverOne(writeKey, source.id, 'rot-1'))).toBe(true);

    const rotated = await patch(destination.id, { signingSecret: after, signingSecretOverlap: '3s' });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json()).toMatchObject({ signingSecretSet: true, previousSigningSecretUntil: expect.any(String) });
    expect(rotated.body).not.toContain(after);
    expect(rotated.body).not.toContain(before);
    const until = Date.parse(rotated.json().previousSigningSecretUntil);

    const during = await deliverOne(writeKey, source.id, 'rot-2');
    expect(during.at).toBeLessThan(until);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(before, during)).toBe(true);
    expect(verifies(after, during)).toBe(true);

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now()) + 100));
    const later = await deliverOne(writeKey, source.id, 'rot-3');
    expect(verifies(after, later)).toBe(true);
    expect(verifies(before, later)).toBe(false);
    expect((await system.app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: auth })).json().previousSigningSecretUntil).toBeUndefined();
    // Gone from the stored row as well, not only from the signatures: the API
    // drops a rotated-out secret when its overlap ends.
    const raw = connectSqlite(system.config.databasePath);
    try {
      const previous = () => raw.selectFrom('destinations').select(['previous_signing_secret', 'previous_signing_secret_until']).where('id', '=', destination.id).executeTakeFirstOrThrow();
      await waitFor(async () => expect(await previous()).toEqual({ previous_signing_secret: null, previous_signing_secret_until: null }), 2_000);
    } finally {
      await raw.destroy();
    }
  });

  it('uses SIGNING_SECRET_OVERLAP when a rotation names no overlap', async () => {
    const { destination } = await sourceWithDestination(system.store, { signingSecret: newSecret(), webhooks: [{ url: receiver.url, headers: {} }] });
    const started = Date.now();
    const rotated = (await patch(destination.id, { signingSecret: newSecret() })).json();
    // startSystem keeps the default of 24h.
    expect(Date.parse(rotated.previousSigningSecretUntil) - started).toBeGreaterThan(24 * 3_600_000 - 60_000);
    const off = (await patch(destination.id, { signingSecret: null })).json();
    expect(off).toMatchObject({ signingSecretSet: false });
    expect(off.previousSigningSecretUntil).toBeUndefined();
  });

  it.each([
    ['not-a-secret', 'signingSecret: must start with whsec_ (Standard Webhooks secret format)'],
    ['whsec_***', 'signingSecret: must be whsec_ followed by base64'],
    [`whsec_${randomBytes(8).toString('base64')}`, 'signingSecret: must carry 24 to 64 bytes of key (base64), not 8'],
  ])('refuses the malformed secret %s without echoing it', async (secret, message) => {
    const { destination } = await sourceWithDestination(system.store, { webhooks: [] });
    const res = await patch(destination.id, { signingSecret: secret });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 'invalid_request', message });
  });

  it('refuses a bad overlap, naming the field', async () => {
    const { destination } = await sourceWithDestination(system.store, { webhooks: [] });
    const res = await patch(destination.id, { signingSecret: newSecret(), signingSecretOverlap: 'a while' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^signingSecretOverlap: "a while" is not a duration/);
  });
});

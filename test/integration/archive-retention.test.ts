import { ADMIN_TOKEN, sourceWithDestination, startSystem, trackBatch, basicAuth, type TestSystem } from '../helpers/system';
import { waitFor } from '../helpers/processes';
import { isSealedBody } from '../../src/privacy/sealed-body';

/**
 * The archive on the SQLite store (`npm start`'s): every accepted message is in the archive when the
 * call is answered, sealed, with no user id in the clear; ARCHIVE_RETENTION removes it by a
 * scheduled delete; `0` switches the archive off.
 */

const EVERYTHING = { since: '1970-01-01T00:00:00.000Z', until: '2100-01-01T00:00:00.000Z' };
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('with a short ARCHIVE_RETENTION', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startSystem({ archiveRetention: 2_000 });
  });
  afterAll(() => system.close());

  it('archives every accepted message before answering, sealed, whether or not any destination gets it; then removes it past retention', async () => {
    // A source with no destination at all: nothing is delivered, everything is archived.
    const { source, writeKey } = await system.store.sources.create('archive without destinations');
    const ids = ['keep-0', 'keep-1', 'keep-2'];
    const answered = await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: trackBatch(ids) });
    expect(answered.statusCode).toBe(200);
    const { messages } = await system.store.archive.page(source.id, EVERYTHING, 10);
    expect(messages.map((m) => m.messageId).sort()).toEqual(ids);
    for (const message of messages) {
      expect(isSealedBody(message.call)).toBe(true);
      // The user id ('u') only as its keyed hash.
      expect(JSON.stringify({ ...message, call: undefined })).not.toContain('"u"');
      expect(message.userHash).toMatch(/^h1_/);
    }
    // The same request again (a sender's retry): archived once.
    await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: trackBatch(ids) });
    expect((await system.store.archive.page(source.id, EVERYTHING, 10)).messages).toHaveLength(3);

    await waitFor(async () => {
      const left = (await system.store.archive.page(source.id, EVERYTHING, 10)).messages.length;
      if (left > 0) throw new Error(`${left} archived messages left`);
    }, 15_000);
  }, 60_000);
});

describe('with ARCHIVE_RETENTION=0', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startSystem({ archiveRetention: 0 });
  });
  afterAll(() => system.close());

  it('archives nothing and refuses replays', async () => {
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: 'https://example.com/hook', headers: {} }], enabled: false });
    expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: trackBatch(['off-0']) })).statusCode).toBe(200);
    expect((await system.store.archive.page(source.id, EVERYTHING, 10)).messages).toHaveLength(0);
    const replay = await system.app.inject({ method: 'POST', url: '/admin/replays', headers: auth, payload: { sourceId: source.id, destinationId: destination.id, ...EVERYTHING } });
    expect(replay.statusCode).toBe(409);
    expect(replay.json().message).toContain('ARCHIVE_RETENTION');
  }, 60_000);
});

describe('with PAYLOAD_ENCRYPTION=off', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startSystem({ payloadEncryption: false });
  });
  afterAll(() => system.close());

  it('a DELETE regulation deletes the archived messages of the user, which nothing sealed', async () => {
    const { source, writeKey } = await system.store.sources.create('archive in the clear');
    const batch = [
      { type: 'track', messageId: 'clear-gone', userId: 'clear-erased', event: 'A' },
      { type: 'track', messageId: 'clear-anonymous', anonymousId: 'clear-erased', event: 'A' },
      { type: 'track', messageId: 'clear-kept', userId: 'clear-kept', event: 'A' },
    ];
    expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } })).statusCode).toBe(200);
    expect((await system.store.archive.page(source.id, EVERYTHING, 10)).messages).toHaveLength(3);
    const regulation = await system.app.inject({ method: 'POST', url: '/admin/regulations', headers: auth, payload: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['clear-erased'] } });
    expect(regulation.statusCode).toBe(201);
    expect((await system.store.archive.page(source.id, EVERYTHING, 10)).messages.map((m) => m.messageId)).toEqual(['clear-kept']);
  }, 60_000);
});

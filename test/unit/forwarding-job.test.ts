import { randomBytes } from 'node:crypto';
import type { MessageBody } from '../../src/delivery/types';
import { forwardedCalls, forwardingJobId, openedCalls, type CallFrom } from '../../src/messages/forwarding-job';
import { messageSubject } from '../../src/privacy/subjects';
import { testKeyring } from '../helpers/payload-keys';

/**
 * A forwarding job's input: each forwarded call sealed under the data key of the user it came from
 * (a blocked event is that user's call, a Violation Generated quotes its names), opened again on the
 * worker, and left out once that user was erased. Its id is derived from the page. Pure but for an
 * in-memory key table.
 */

const keyring = testKeyring();

function keyTable() {
  const keys = new Map<string, Buffer>();
  return {
    keys,
    getOrCreate: (subjects: string[]) => {
      for (const s of subjects) if (!keys.has(s)) keys.set(s, randomBytes(32));
      return Promise.resolve(new Map(subjects.map((s) => [s, keys.get(s)!])));
    },
    getMany: (subjects: string[]) => Promise.resolve(new Map(subjects.flatMap((s) => (keys.has(s) ? [[s, keys.get(s)!] as const] : [])))),
  };
}

const original = (userId: string): MessageBody => ({ type: 'track', userId, event: 'Order Completed', messageId: `m-${userId}` });
const violation = (userId: string): CallFrom => ({
  call: { type: 'track', fields: { userId: 'schema-violations', messageId: `sch-${userId}`, event: 'Violation Generated', properties: { eventName: 'Secret Event Name', violationField: 'properties.card' } } },
  original: original(userId),
});

describe('a forwarding job', () => {
  it("seals each call under its original's subject: no name of it is readable in the input, and it opens again", async () => {
    const table = keyTable();
    const page = [violation('alice'), violation('bob')];
    const sealed = await forwardedCalls(page, { keyring, dataKeys: table });
    expect(JSON.stringify(sealed)).not.toContain('Secret Event Name');
    expect(sealed.map((c) => ('sealed' in c ? c.sealed.subject : undefined))).toEqual([messageSubject(keyring, 'track', original('alice')), messageSubject(keyring, 'track', original('bob'))]);
    const { calls, erased } = await openedCalls(sealed, table);
    expect(calls).toEqual(page.map((p) => p.call));
    expect(erased).toBe(0);
  });

  it('leaves out the calls of a user erased since (the data key destroyed)', async () => {
    const table = keyTable();
    const sealed = await forwardedCalls([violation('alice'), violation('bob')], { keyring, dataKeys: table });
    table.keys.delete(messageSubject(keyring, 'track', original('alice'))!);
    const { calls, erased } = await openedCalls(sealed, table);
    expect(calls.map((c) => c.fields.messageId)).toEqual(['sch-bob']);
    expect(erased).toBe(1);
  });

  it('carries calls as they are without payload keys', async () => {
    const page = [violation('alice')];
    const plain = await forwardedCalls(page);
    expect(plain).toEqual([{ type: 'track', messageId: 'sch-alice', fields: page[0].call.fields }]);
    expect((await openedCalls(plain, keyTable())).calls).toEqual([page[0].call]);
  });

  it.each([
    ['the same page, the same id', ['a', 'b'], ['a', 'b'], true],
    ['another order, another id', ['a', 'b'], ['b', 'a'], false],
    ['one call more, another id', ['a'], ['a', 'b'], false],
  ])('%s', (_rule, first, second, same) => {
    const id = (ids: string[]) => forwardingJobId('src-t', ids.map((messageId) => ({ messageId })));
    expect(id(first) === id(second)).toBe(same);
    expect(id(first)).toMatch(/^forward:src-t:[0-9a-f]{32}$/);
  });
});

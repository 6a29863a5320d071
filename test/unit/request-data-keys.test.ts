import { randomBytes } from 'node:crypto';
import { acceptCalls } from '../../src/messages/accept-calls';
import { callArchiver } from '../../src/messages/archive-calls';
import { outgoing } from '../../src/messages/plan-deliveries';
import { requestDataKeys, type DataKeyReads } from '../../src/messages/request-data-keys';
import { bodySealer } from '../../src/messages/seal-bodies';
import { parseKeyring } from '../../src/privacy/keyring';
import type { ArchivedMessage } from '../../src/store/types';

const keyring = parseKeyring(`a=${randomBytes(32).toString('base64')}`);

/** A data-key table in memory that counts what it is asked (the store's own getOrCreate: one read per call). */
function countingKeys() {
  const table = new Map<string, Buffer>();
  const asked: string[][] = [];
  const keys: DataKeyReads = {
    async getOrCreate(subjects) {
      asked.push([...subjects]);
      for (const subject of subjects) if (!table.has(subject)) table.set(subject, randomBytes(32));
      return new Map(subjects.map((subject) => [subject, table.get(subject)!]));
    },
  };
  return { keys, asked };
}

const track = (userId: string) => ({ type: 'track' as const, fields: { userId, event: 'Order Completed' } });

describe("an ingest request's data keys", () => {
  it('are read once for the archive and the sealing of its deliveries', async () => {
    const { keys, asked } = countingKeys();
    const acceptance = acceptCalls([track('u1'), track('u2'), track('u1')], { receivedAtMs: Date.now(), inBatch: true });
    if ('problem' in acceptance) throw new Error(acceptance.problem);
    const archived: ArchivedMessage[] = [];
    const archive = callArchiver({ archive: { add: async (messages) => void archived.push(...messages) } }, keyring);
    const seal = bodySealer(keys, keyring);

    const request = requestDataKeys(keys);
    const archiving = archive('src_1', acceptance.accepted, request);
    const sealed = await seal(
      acceptance.accepted.map((a) => outgoing(a.message)),
      request,
    );
    await archiving;

    expect(asked).toHaveLength(1);
    expect(new Set(asked[0])).toEqual(new Set(asked.flat()));
    expect(asked[0]).toHaveLength(2);
    expect(archived).toHaveLength(3);
    expect(sealed.every((m) => m.sealed)).toBe(true);
  });

  it.each([
    ['the same users again', ['a', 'b'], ['b', 'a'], [['a', 'b']]],
    ['some of them', ['a', 'b'], ['a'], [['a', 'b']]],
    ['a user the first read did not ask for', ['a'], ['a', 'c'], [['a'], ['c']]],
    ['a user twice in one ask', ['a', 'a'], ['a'], [['a']]],
  ])('asking for %s reads only what no read asked for before', async (_, first, second, reads) => {
    const { keys, asked } = countingKeys();
    const request = requestDataKeys(keys);
    const [one, two] = await Promise.all([request.getOrCreate(first), request.getOrCreate(second)]);
    expect(asked).toEqual(reads);
    expect([...one.keys()].sort()).toEqual([...new Set(first)].sort());
    expect([...two.keys()].sort()).toEqual([...new Set(second)].sort());
    for (const subject of second) if (one.has(subject)) expect(two.get(subject)).toBe(one.get(subject));
  });

  it('fails every step that waited on a read that failed', async () => {
    const request = requestDataKeys({ getOrCreate: () => Promise.reject(new Error('store away')) });
    await expect(request.getOrCreate(['a'])).rejects.toThrow('store away');
    await expect(request.getOrCreate(['a'])).rejects.toThrow('store away');
  });

  it('is per request: a new request reads again (a key destroyed meanwhile is not served)', async () => {
    const { keys, asked } = countingKeys();
    await requestDataKeys(keys).getOrCreate(['a']);
    await requestDataKeys(keys).getOrCreate(['a']);
    expect(asked).toEqual([['a'], ['a']]);
  });
});

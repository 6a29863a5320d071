import { dataKeyStore } from '../../src/store/data-keys';
import { OpenedValues } from '../../src/privacy/opened-values';
import { identifierHash } from '../../src/privacy/keyring';
import { memoryDatabase } from '../helpers/memory-db';
import { testKeyring } from '../helpers/payload-keys';

/**
 * A data key a regulation destroyed in one process (the API) must not stay
 * unwrapped in another's memory (a worker's), where a heap or core dump would still hold it.
 */
describe("a data key destroyed by another process's regulation", () => {
  const keyring = testKeyring();
  const subject = identifierHash(keyring, 'userId', 'u-opened');

  it('is gone from this process within the opened values\' max age, though nothing here read it again', async () => {
    const { db } = await memoryDatabase();
    let now = 0;
    const workerOpened = new OpenedValues<Buffer>(100, 60_000, () => now);
    const worker = dataKeyStore(db, keyring, workerOpened);
    const api = dataKeyStore(db, keyring);
    await worker.getOrCreate([subject]);
    expect(workerOpened.size).toBe(1);
    expect(await api.destroy([subject])).toBe(1);
    now = 60_000;
    workerOpened.sweep();
    expect(workerOpened.size).toBe(0);
    expect(await worker.get(subject)).toBeUndefined();
    await db.destroy();
  });
});

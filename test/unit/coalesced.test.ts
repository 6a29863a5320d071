import { coalesced } from '../../src/coalesced';

/** A read the test settles by hand, counting how often it ran. */
function manualRead<T>() {
  const pending: { resolve: (value: T) => void; reject: (err: Error) => void }[] = [];
  const read = () => new Promise<T>((resolve, reject) => pending.push({ resolve, reject }));
  return { read, pending };
}

describe('coalesced', () => {
  it('runs one read for any number of callers while it is under way, and gives each its value', async () => {
    const { read, pending } = manualRead<string>();
    const probe = coalesced(read, 1_000, () => 0);
    const callers = Array.from({ length: 1_000 }, () => probe());
    expect(pending).toHaveLength(1);
    pending[0].resolve('ok');
    expect(await Promise.all(callers)).toEqual(Array(1_000).fill('ok'));
  });

  it.each([
    ['right after it settled', 0, 1],
    ['just inside freshForMs', 999, 1],
    ['once freshForMs has passed', 1_000, 2],
    ['long after', 60_000, 2],
  ])('reads again only once freshForMs has passed since the reading settled: asked %s', async (_when, later, reads) => {
    let clock = 5_000;
    const { read, pending } = manualRead<number>();
    const probe = coalesced(read, 1_000, () => clock);
    const first = probe();
    clock += 10_000; // the read itself took long: freshness counts from when it settled
    pending[0].resolve(1);
    await first;
    clock += later;
    const second = probe();
    expect(pending).toHaveLength(reads);
    pending[reads - 1].resolve(2);
    expect(await second).toBe(reads);
  });

  it('keeps no failed read: every waiting caller gets the error, the next caller reads again', async () => {
    const { read, pending } = manualRead<string>();
    const probe = coalesced(read, 1_000, () => 0);
    const waiting = [probe(), probe()];
    pending[0].reject(new Error('no answer'));
    for (const caller of waiting) await expect(caller).rejects.toThrow('no answer');
    const next = probe();
    expect(pending).toHaveLength(2);
    pending[1].resolve('back');
    expect(await next).toBe('back');
  });
});

import { inParallel } from '../../src/in-parallel';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('inParallel', () => {
  it('runs every item with at most `limit` at once', async () => {
    let open = 0;
    let maxOpen = 0;
    const done: number[] = [];
    await inParallel([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      maxOpen = Math.max(maxOpen, ++open);
      await tick();
      open--;
      done.push(n);
    });
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(maxOpen).toBe(3);
  });

  it('starts no new item after a failure and rejects only once the items under way have ended', async () => {
    const started: number[] = [];
    let underWay = 0;
    const run = inParallel([1, 2, 3, 4, 5, 6], 2, async (n) => {
      started.push(n);
      underWay++;
      await tick();
      if (n === 1) {
        underWay--;
        throw new Error('refused');
      }
      await tick();
      await tick();
      underWay--;
    });
    await expect(run).rejects.toThrow('refused');
    expect(underWay).toBe(0);
    // Item 1 failed while 2 ran; the lane running 2 stops after it.
    expect(started).toEqual([1, 2]);
  });
});

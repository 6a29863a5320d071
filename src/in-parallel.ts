/**
 * Runs `run` on every item, `limit` at a time. After a failure no new item starts, and it rejects
 * only once every lane has stopped, so nothing keeps running behind its caller's back.
 */
export async function inParallel<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (!failed && next < items.length) {
      try {
        await run(items[next++]);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  });
  const rejected = (await Promise.allSettled(lanes)).find((lane): lane is PromiseRejectedResult => lane.status === 'rejected');
  if (rejected) throw rejected.reason;
}

/**
 * One reading shared by every caller: callers while a read is under way await that read, and a
 * settled reading is answered for `freshForMs` after it settled, so however many ask, `read` runs
 * at most once per `freshForMs` (a probe storm must not become a Temporal storm). A
 * rejected read is not kept: the next caller reads again.
 */
export function coalesced<T>(read: () => Promise<T>, freshForMs: number, now: () => number = Date.now): () => Promise<T> {
  let reading: Promise<T> | undefined;
  let settled: { value: T; at: number } | undefined;
  return () => {
    if (settled && now() - settled.at < freshForMs) return Promise.resolve(settled.value);
    reading ??= read().then(
      (value) => {
        settled = { value, at: now() };
        reading = undefined;
        return value;
      },
      (err: unknown) => {
        reading = undefined;
        throw err;
      },
    );
    return reading;
  };
}

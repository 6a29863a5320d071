import { batchBytes, encodeBatch, MessageQueue } from '../../../src/client/batcher/queue';

const item = (id: number, size: number) => {
  const json = JSON.stringify({ id, pad: 'x'.repeat(Math.max(0, size - 19 - String(id).length)) });
  return { id, json, bytes: Buffer.byteLength(json) };
};

describe('encodeBatch', () => {
  it('produces the same JSON as encoding {batch, sentAt}', () => {
    const messages = [{ type: 'track', event: 'é' }, { type: 'identify' }];
    const body = encodeBatch(messages.map((m) => JSON.stringify(m)), '2026-03-01T10:00:00.000Z');
    expect(body).toBe(JSON.stringify({ batch: messages, sentAt: '2026-03-01T10:00:00.000Z' }));
  });

  it('batchBytes predicts the body size exactly', () => {
    const items = [item(1, 100), item(2, 2000), item(3, 5)];
    const body = encodeBatch(items.map((i) => i.json), new Date().toISOString());
    expect(batchBytes(items.length, items.reduce((sum, i) => sum + i.bytes, 0))).toBe(Buffer.byteLength(body));
    expect(batchBytes(0, 0)).toBe(Buffer.byteLength(encodeBatch([], new Date().toISOString())));
  });
});

describe('MessageQueue', () => {
  it('takes at most maxCount messages, oldest first', () => {
    const queue = new MessageQueue<ReturnType<typeof item>>();
    for (let i = 1; i <= 5; i++) queue.push(item(i, 50));
    expect(queue.take(2, 1_000_000).map((i) => i.id)).toEqual([1, 2]);
    expect(queue.take(2, 1_000_000).map((i) => i.id)).toEqual([3, 4]);
    expect(queue.take(2, 1_000_000).map((i) => i.id)).toEqual([5]);
    expect(queue.length).toBe(0);
    expect(queue.take(2, 1_000_000)).toEqual([]);
  });

  it('stops a batch before the body would pass maxBytes', () => {
    const queue = new MessageQueue<ReturnType<typeof item>>();
    const items = [item(1, 400), item(2, 400), item(3, 400)];
    items.forEach((i) => queue.push(i));
    const maxBytes = batchBytes(2, items[0].bytes + items[1].bytes);
    expect(queue.take(100, maxBytes).map((i) => i.id)).toEqual([1, 2]);
    expect(queue.take(100, maxBytes - 1).map((i) => i.id)).toEqual([3]);
  });

  it('always takes at least one message, even one larger than maxBytes', () => {
    const queue = new MessageQueue<ReturnType<typeof item>>();
    queue.push(item(1, 500));
    expect(queue.take(10, 100).map((i) => i.id)).toEqual([1]);
  });

  it('knows when everything queued no longer fits in one batch', () => {
    const queue = new MessageQueue<ReturnType<typeof item>>();
    const a = item(1, 300);
    const b = item(2, 300);
    const limit = batchBytes(2, a.bytes + b.bytes);
    queue.push(a);
    queue.push(b);
    expect(queue.exceedsOneBatch(limit)).toBe(false);
    queue.push(item(3, 1));
    expect(queue.exceedsOneBatch(limit)).toBe(true);
    queue.take(1, limit);
    expect(queue.exceedsOneBatch(limit)).toBe(false);
  });

  it('keeps order and size bookkeeping across many pushes and takes', () => {
    const queue = new MessageQueue<ReturnType<typeof item>>();
    const taken: number[] = [];
    let next = 0;
    for (let round = 0; round < 500; round++) {
      for (let i = 0; i < 7; i++) queue.push(item(next++, 30));
      taken.push(...queue.take(5, 1_000_000).map((i) => i.id));
    }
    taken.push(...queue.drain().map((i) => i.id));
    expect(taken).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(queue.length).toBe(0);
    expect(queue.exceedsOneBatch(batchBytes(0, 0))).toBe(false);
  });
});

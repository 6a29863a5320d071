import { WebhookTraffic } from '../../src/activities/webhook-traffic';

describe('WebhookTraffic: attempts in flight per webhook', () => {
  it('admits up to the cap per key, then refuses until one finishes', () => {
    const traffic = new WebhookTraffic(2, 1_000);
    const a = traffic.tryStart('d1 u', 0);
    const b = traffic.tryStart('d1 u', 0);
    expect(a && b).toBeDefined();
    expect(traffic.tryStart('d1 u', 0)).toBeUndefined();
    // Another webhook (or the same URL of another destination) has its own share.
    expect(traffic.tryStart('d2 u', 0)).toBeDefined();
    a!(10);
    a!(10); // finishing twice frees one slot, not two
    expect(traffic.inFlight('d1 u')).toBe(1);
    expect(traffic.tryStart('d1 u', 0)).toBeDefined();
    expect(traffic.tryStart('d1 u', 0)).toBeUndefined();
  });

  it('has no cap at 0', () => {
    const traffic = new WebhookTraffic(0, 1_000);
    for (let i = 0; i < 1_000; i++) expect(traffic.tryStart('k', i % 3)).toBeDefined();
    expect(traffic.inFlight('k')).toBe(1_000);
  });
});

describe('WebhookTraffic: which webhooks answer fast enough for a local first attempt', () => {
  it('does not know a webhook it has not sent to', () => {
    expect(new WebhookTraffic(5, 1_000).answersFast('k', 0)).toBe(false);
  });

  it('knows it fast after an attempt under the budget, and slow again after one over it', () => {
    const traffic = new WebhookTraffic(5, 1_000);
    traffic.tryStart('k', 0)!(999);
    expect(traffic.answersFast('k', 0)).toBe(true);
    traffic.tryStart('k', 0)!(1_000);
    expect(traffic.answersFast('k', 0)).toBe(false);
    traffic.tryStart('k', 0)!(50);
    expect(traffic.answersFast('k', 0)).toBe(true);
  });

  it('stops counting it fast while an attempt to it has been running longer than the budget', () => {
    const traffic = new WebhookTraffic(5, 1_000);
    traffic.tryStart('k', 0)!(20);
    const hanging = traffic.tryStart('k', 10_000)!;
    expect(traffic.answersFast('k', 10_500)).toBe(true);
    expect(traffic.answersFast('k', 11_000)).toBe(false);
    hanging(5_000);
    expect(traffic.answersFast('k', 16_000)).toBe(false);
  });
});

describe('WebhookTraffic: slow-lane attempts waiting in the worker for a busy webhook', () => {
  it('starts at once when there is room', async () => {
    const traffic = new WebhookTraffic(1, 1_000);
    expect(await traffic.waitToStart('k', 10)).toBeDefined();
    expect(traffic.inFlight('k')).toBe(1);
  });

  it('hands a freed room to the longest waiter, before any attempt that asks later', async () => {
    const traffic = new WebhookTraffic(1, 1_000);
    const first = traffic.tryStart('k', 0)!;
    const order: string[] = [];
    const a = traffic.waitToStart('k', 5_000).then((finish) => (order.push('a'), finish));
    const b = traffic.waitToStart('k', 5_000).then((finish) => (order.push('b'), finish));
    expect(traffic.waitingFor('k')).toBe(2);
    // A regular attempt does not jump the queue: it comes back busy while others wait.
    first(5_000);
    expect(traffic.tryStart('k', 0)).toBeUndefined();
    (await a)!(10);
    (await b)!(10);
    expect(order).toEqual(['a', 'b']);
    expect(traffic.inFlight('k')).toBe(0);
    expect(traffic.waitingFor('k')).toBe(0);
    expect(traffic.tryStart('k', 0)).toBeDefined();
  });

  it('gives up after its wait with no room, and leaves the queue', async () => {
    const traffic = new WebhookTraffic(1, 1_000);
    traffic.tryStart('k', 0);
    expect(await traffic.waitToStart('k', 5)).toBeUndefined();
    expect(traffic.waitingFor('k')).toBe(0);
    expect(traffic.inFlight('k')).toBe(1);
  });

  it('keeps at most the cap in flight while handing rooms over', async () => {
    const traffic = new WebhookTraffic(2, 1_000);
    const running = [traffic.tryStart('k', 0)!, traffic.tryStart('k', 0)!];
    const waiters = Array.from({ length: 5 }, () => traffic.waitToStart('k', 5_000));
    for (let i = 0; i < 5; i++) {
      running.shift()!(100);
      running.push((await waiters[i])!);
      expect(traffic.inFlight('k')).toBe(2);
    }
  });

  it('frees a room without judging the webhook when nothing was sent', () => {
    const traffic = new WebhookTraffic(1, 1_000);
    traffic.tryStart('k', 0)!(10);
    traffic.tryStart('k', 0)!();
    expect(traffic.answersFast('k', 0)).toBe(true);
  });
});

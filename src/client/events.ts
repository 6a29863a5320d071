import type { AnalyticsError } from './errors';
import type { Message } from './types';

/** What a client reports about messages' fates, for code that watches all of them (metrics, logs). */
export interface AnalyticsEvents {
  /** The server acknowledged a batch: these messages are delivered. */
  delivered: (messages: Message[]) => void;
  /**
   * These messages will not be delivered. Refused calls report here too: `messages` holds the
   * refused message, or is empty when it was invalid and could not be built.
   */
  failed: (error: AnalyticsError, messages: Message[]) => void;
}

/**
 * A minimal typed listener list. Listeners run inside the client's background work, so one that
 * throws is reported to `onListenerError` instead of breaking a flush.
 */
export class Listeners<Events extends { [K in keyof Events]: (...args: never[]) => void }> {
  private readonly lists = new Map<keyof Events, Events[keyof Events][]>();

  constructor(private readonly onListenerError: (event: keyof Events, err: unknown) => void) {}

  add<K extends keyof Events>(event: K, listener: Events[K]): void {
    this.lists.set(event, [...(this.lists.get(event) ?? []), listener]);
  }

  remove<K extends keyof Events>(event: K, listener: Events[K]): void {
    const list = this.lists.get(event) ?? [];
    const index = list.lastIndexOf(listener);
    if (index >= 0) this.lists.set(event, [...list.slice(0, index), ...list.slice(index + 1)]);
  }

  has(event: keyof Events): boolean {
    return (this.lists.get(event)?.length ?? 0) > 0;
  }

  emit<K extends keyof Events>(event: K, ...args: Parameters<Events[K]>): void {
    for (const listener of this.lists.get(event) ?? []) {
      try {
        (listener as (...a: Parameters<Events[K]>) => void)(...args);
      } catch (err) {
        this.onListenerError(event, err);
      }
    }
  }
}

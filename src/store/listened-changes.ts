/**
 * The listener protocol of a cache that store-notifications.ts keeps current (NotifiedCache,
 * WriteKeyDirectory): while the store's LISTEN connection is up every change is heard, so what was
 * read may be served; when it comes up or goes down, what was read before may be stale, so both
 * count as a change of everything. A cache says what such a change drops (`changedAll`) and reads
 * `listening` to decide whether what it holds may be served.
 */
export abstract class ListenedChanges {
  protected listening = false;

  /** Anything may have changed (a NOTIFY naming no key, or the listener coming or going). */
  abstract changedAll(): void;

  /** LISTEN is in place: from now on every change is heard; what was read before may be stale. */
  listenerUp(): void {
    this.changedAll();
    this.listening = true;
  }

  /** The LISTEN connection is gone: changes may go unheard, so what was read may be stale. */
  listenerDown(): void {
    this.changedAll();
    this.listening = false;
  }

  get isListening(): boolean {
    return this.listening;
  }
}

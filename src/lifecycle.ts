import type { Logger } from 'pino';

/**
 * What an entry point opened, closed newest first and once, on SIGTERM/SIGINT or when asked: the
 * HTTP server before the Temporal connections its requests use, those before the store.
 */
export class Lifecycle {
  private readonly closers: { name: string; close: () => unknown }[] = [];
  private stopping?: Promise<void>;

  constructor(private readonly logger: Logger) {}

  /** Registers something to close; returns it, so opening and registering read as one line. */
  opened<T>(name: string, resource: T, close: (resource: T) => unknown): T {
    this.closers.push({ name, close: () => close(resource) });
    return resource;
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const { name, close } of this.closers.reverse()) {
        try {
          await close();
        } catch (err) {
          this.logger.error({ err: (err as Error).message }, `closing ${name} failed`);
        }
      }
    })();
    return this.stopping;
  }

  /** Stops on the first SIGTERM or SIGINT, then exits 0. */
  stopOnSignals(): void {
    const stop = () => void this.stop().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  }
}

/** An entry point's main: a failure to start is printed and exits 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

/** Where the client's log lines go. `console` fits; for pino, map `(message, details)` to `(details, message)`. */
export interface Logger {
  debug(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
}

/** The name `DEBUG` must match to turn on debug lines (seed: `DEBUG=analytics`). */
export const DEBUG_NAMESPACE = 'analytics';

/**
 * Reads `DEBUG` the way the `debug` package does, so `DEBUG=analytics`, `DEBUG=*` and
 * `DEBUG=express:*,analytics` all work and `DEBUG=*,-analytics` turns it off.
 */
export function isDebugEnabled(debugEnv: string | undefined, namespace = DEBUG_NAMESPACE): boolean {
  if (!debugEnv) return false;
  const toRegExp = (pattern: string) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  let enabled = false;
  for (const pattern of debugEnv.split(/[\s,]+/).filter(Boolean)) {
    if (pattern.startsWith('-')) {
      if (toRegExp(pattern.slice(1)).test(namespace)) return false;
    } else if (toRegExp(pattern).test(namespace)) {
      enabled = true;
    }
  }
  return enabled;
}

function line(level: string, message: string, details?: Record<string, unknown>): string {
  return `${DEBUG_NAMESPACE} ${level} ${message}${details ? ` ${JSON.stringify(details)}` : ''}`;
}

/** Default sink: one line per entry on stderr, where `debug`-style output is expected. */
export const stderrLogger: Logger = {
  debug: (message, details) => console.error(line('debug', message, details)),
  warn: (message, details) => console.error(line('warn', message, details)),
  error: (message, details) => console.error(line('error', message, details)),
};

/**
 * The client's own view of its logger: debug lines only when enabled, and a logger that throws
 * never breaks a flush running in the background.
 */
export function createLog(logger: Logger, debug: boolean): Logger {
  // Called as a method of `logger`, so a class-based logger keeps its `this`.
  const guard = (level: keyof Logger) => (message: string, details?: Record<string, unknown>) => {
    try {
      if (details === undefined) logger[level](message);
      else logger[level](message, details);
    } catch {
      // A broken logger must not turn a log line into a lost batch.
    }
  };
  return {
    debug: debug ? guard('debug') : () => {},
    warn: guard('warn'),
    error: guard('error'),
  };
}

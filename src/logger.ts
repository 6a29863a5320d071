import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

/**
 * Paths that could carry a secret are censored wherever they appear in a log line: admin tokens,
 * write keys (Basic auth), shared secrets and webhook header values.
 */
const REDACT = [
  'req.headers.authorization',
  'headers.authorization',
  '*.authorization',
  '*.sharedSecret',
  'sharedSecret',
  '*.writeKey',
  'writeKey',
  'adminToken',
  '*.headers',
];

export const LOG_FORMAT_SETTINGS = ['auto', 'pretty', 'json'] as const;
export type LogFormatSetting = (typeof LOG_FORMAT_SETTINGS)[number];
export type LogFormat = 'pretty' | 'json';

/**
 * LOG_FORMAT `auto`: human-readable lines for a person at a terminal, JSON lines for whatever else
 * reads stdout (a container runtime, a log shipper, a test), so production output never changes
 * because of where it runs unless someone asks.
 */
export function logFormat(setting: LogFormatSetting, stdoutIsTTY: boolean): LogFormat {
  if (setting === 'auto') return stdoutIsTTY ? 'pretty' : 'json';
  return setting;
}

export function createLogger(level: string, name = 'switchyard', format: LogFormatSetting = 'auto'): Logger {
  const options = { name, level, redact: { paths: REDACT, censor: '[redacted]' } };
  if (logFormat(format, process.stdout.isTTY === true) === 'json') return pino(options);
  // A stream in this thread rather than a transport's worker thread: lines stay in order with the
  // banner printed by console.log, and nothing needs resolving from a worker under tsx.
  return pino(options, pretty({ colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true }));
}

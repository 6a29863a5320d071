import pino, { type Logger } from 'pino';

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

export function createLogger(level: string, name = 'switchyard'): Logger {
  return pino({ name, level, redact: { paths: REDACT, censor: '[redacted]' } });
}

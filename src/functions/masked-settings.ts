/**
 * Values of settings marked `sensitive` are shown as Segment shows them: ten bullets and the last
 * four characters (`••••••••••abcd`), and never in full in a log line, an error or an answer.
 */

const BULLETS = '•'.repeat(10);
/** A value this short is masked whole: its last four characters would be most of it. */
const SHORTEST_WITH_TAIL = 8;

export function maskedValue(value: string): string {
  return value.length >= SHORTEST_WITH_TAIL ? BULLETS + value.slice(-4) : BULLETS;
}

/** `text` with every occurrence of each secret value (strings, and array entries) masked, longest first. */
export function maskSecrets(text: string, values: unknown[]): string {
  const secrets = values
    .flatMap((v): unknown[] => (Array.isArray(v) ? (v as unknown[]) : [v]))
    .filter((v): v is string => typeof v === 'string' && v.length > 0)
    .sort((a, b) => b.length - a.length);
  let masked = text;
  for (const secret of secrets) masked = masked.split(secret).join(maskedValue(secret));
  return masked;
}

/**
 * Splits a list for multi-row INSERTs and `IN (...)` lists, which SQLite bounds by its number of
 * bound parameters: every store module that writes or looks up many rows at once goes through it.
 */
export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

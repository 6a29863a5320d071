import type { RawFunctionRequest } from './source-function-request';

/**
 * Whether a source function's recorded request names any of a regulation's users. No user is known
 * for a raw request (only its function knows which field is the user), so a DELETE regulation asks
 * the request itself: a value of its body (each string or number of a JSON body; each field and value
 * of a form or text body), of its headers or of its URL's query that is exactly one of the ids, or the
 * id anywhere in the error and console output the failed run left. Exact values, not substrings, in
 * the request: an id "42" does not erase every request with a 42 in it; the output is free text.
 */
export function requestMentions(record: { request: RawFunctionRequest; error?: { message: string }; logs?: readonly string[] }, ids: readonly string[]): boolean {
  const wanted = new Set(ids.filter((id) => id.length > 0));
  if (wanted.size === 0) return false;
  const values = [...bodyValues(record.request.body), ...Object.values(record.request.headers), ...queryValues(record.request.url)];
  if (values.some((value) => wanted.has(value))) return true;
  const output = [record.error?.message ?? '', ...(record.logs ?? [])];
  return output.some((text) => [...wanted].some((id) => text.includes(id)));
}

function bodyValues(body: string): string[] {
  try {
    return jsonLeaves(JSON.parse(body));
  } catch {
    // A form (`a=1&b=2`) or any other text: its fields and values, decoded.
    return body.split(/[&=\s,;]+/).map(decoded).filter((part) => part.length > 0);
  }
}

/** Every string and number of a JSON value, iteratively (a deep body is data, not recursion depth). */
function jsonLeaves(root: unknown): string[] {
  const out: string[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') out.push(value);
    else if (typeof value === 'number') out.push(String(value));
    else if (Array.isArray(value)) for (const item of value) stack.push(item);
    else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) stack.push(item);
  }
  return out;
}

function queryValues(url: string): string[] {
  try {
    return [...new URL(url, 'http://request.invalid').searchParams.values()];
  } catch {
    return [];
  }
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return part;
  }
}

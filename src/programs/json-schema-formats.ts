import { fullFormats } from 'ajv-formats/dist/formats';
import { RE2JS } from 're2js';
import { JSON_SCHEMA_BOUNDS } from './bounds';
import { isDateTime } from './json-schema-date-time';

/**
 * The `format`s a rule may name: each checked in time linear in the string, and only up to
 * JSON_SCHEMA_BOUNDS.maxCheckedStringLength characters (a longer string fails its format, and the
 * violation says it was too long to check: json-schema.ts). ajv-formats' own checks run V8
 * regular expressions, and `url`'s is quadratic (0.76 s for one 32 KB value): every format here
 * whose check is a regular expression runs ajv-formats' expression on RE2 instead, with the same
 * answers. A format not listed is refused at save: `url` (use `uri`), `regex` (it would compile
 * the message's data as a JavaScript regular expression) and the rest of ajv-formats' list.
 */

type FormatCheck = (value: string) => boolean;

const bounded = (check: FormatCheck): FormatCheck => (value) => value.length <= JSON_SCHEMA_BOUNDS.maxCheckedStringLength && check(value);

/** An ajv-formats expression run on RE2 (linear whatever the input), its flags carried over. */
function onRe2(name: string): FormatCheck {
  const format = (fullFormats as Record<string, unknown>)[name];
  const expression = format instanceof RegExp ? format : (format as { validate: RegExp }).validate;
  const re2 = RE2JS.compile(expression.source, expression.flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
  return (value) => re2.test(value);
}

/** ajv-formats' `date` and `time`: one fixed-shape expression (no nested repetition) and arithmetic. */
const fixedShape = (name: 'date' | 'time'): FormatCheck => (fullFormats[name] as { validate: FormatCheck }).validate;

const uriReference = onRe2('uri-reference');
/** RFC 3986's URI is a URI reference that has a scheme (ajv-formats' `uri`, without its quadratic expression). */
const SCHEME = RE2JS.compile('^[a-zA-Z][a-zA-Z0-9+\\-.]*:');
/** RFC 1123 host names, as ajv-formats' expression but with its length look-ahead as a length check. */
const HOST_NAME = RE2JS.compile('^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\\.?$', RE2JS.CASE_INSENSITIVE);

export const FORMATS: Readonly<Record<string, FormatCheck>> = {
  'date-time': bounded(isDateTime),
  date: bounded(fixedShape('date')),
  time: bounded(fixedShape('time')),
  email: bounded(onRe2('email')),
  hostname: bounded((value) => value.length <= (value.endsWith('.') ? 254 : 253) && HOST_NAME.test(value)),
  ipv4: bounded(onRe2('ipv4')),
  ipv6: bounded(onRe2('ipv6')),
  uri: bounded((value) => SCHEME.test(value) && uriReference(value)),
  'uri-reference': bounded(uriReference),
  'uri-template': bounded(onRe2('uri-template')),
  uuid: bounded(onRe2('uuid')),
  'json-pointer': bounded(onRe2('json-pointer')),
  'relative-json-pointer': bounded(onRe2('relative-json-pointer')),
};

export const FORMAT_NAMES: readonly string[] = Object.keys(FORMATS);

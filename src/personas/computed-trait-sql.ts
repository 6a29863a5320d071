import type { SqlDialect } from '../store/dialect';
import { q, raw, join, type SqlFragment } from './sql';
import { binaryText, jsonIs, jsonNumber, jsonText, numberAsJson } from './sql-dialect';
import type { ComputedTraitDefinition } from './types';
import { windowStart } from './within';

/**
 * Compiles a computed trait into one SELECT of (profile_id, value) for a source, value being the
 * trait's JSON text. Only profiles with at least one matching event (and, except for count, a
 * usable property value) get a row; the sync sends `clearedValue` to a profile that had a value
 * and no longer has one.
 *
 * Numbers are the numeric JSON values of the property only ("50" as a string is not summed), and
 * non-integer results are rounded to 6 decimals: float sums depend on the order SQLite adds them
 * in, and a last-digit wobble would otherwise count as a change and send an identify.
 */
export function compileComputedTrait(dialect: SqlDialect, sourceId: string, definition: ComputedTraitDefinition, nowMs: number): SqlFragment {
  const filters: SqlFragment[] = [q`e.source_id = ${sourceId}`, q`e.event = ${definition.event}`];
  if (definition.within) filters.push(q`e.timestamp >= ${windowStart(definition.within, nowMs)}`);
  const properties = raw('e.properties');
  const property = definition.property;
  if (property !== undefined) {
    const numeric = ['sum', 'avg', 'min', 'max'].includes(definition.type);
    filters.push(jsonIs(dialect, properties, property, numeric ? 'number' : 'present'));
  }
  const where = join(filters, ' AND ');

  switch (definition.type) {
    case 'count':
      return q`SELECT e.profile_id AS profile_id, CAST(count(*) AS TEXT) AS value FROM profile_events AS e WHERE ${where} GROUP BY e.profile_id`;
    case 'sum':
    case 'avg':
    case 'min':
    case 'max':
      return q`SELECT profile_id, ${numberAsJson(dialect, 'v')} AS value FROM (SELECT e.profile_id AS profile_id, ${raw(definition.type)}(${jsonNumber(dialect, properties, property!)}) AS v FROM profile_events AS e WHERE ${where} GROUP BY e.profile_id) AS per_profile`;
    case 'first':
    case 'last': {
      // Event time first; the insertion order breaks ties between events stamped the same millisecond.
      const order = raw(definition.type === 'first' ? 'e.timestamp ASC, e.id ASC' : 'e.timestamp DESC, e.id DESC');
      return q`SELECT profile_id, value FROM (SELECT e.profile_id AS profile_id, ${jsonText(dialect, properties, property!)} AS value, row_number() OVER (PARTITION BY e.profile_id ORDER BY ${order}) AS nth FROM profile_events AS e WHERE ${where}) AS ranked WHERE nth = 1`;
    }
    case 'most_frequent':
      // Ties go to the value seen most recently, then to the smaller JSON text (byte order), so reruns agree.
      // GROUP BY names the output column: the same expression written twice would be two parameters to PostgreSQL.
      return q`SELECT profile_id, value FROM (SELECT profile_id, value, row_number() OVER (PARTITION BY profile_id ORDER BY times DESC, latest DESC, ${binaryText(dialect, raw('value'))} ASC) AS nth FROM (SELECT e.profile_id AS profile_id, ${jsonText(dialect, properties, property!)} AS value, count(*) AS times, max(e.timestamp) AS latest FROM profile_events AS e WHERE ${where} GROUP BY e.profile_id, value) AS counted) AS ranked WHERE nth = 1`;
  }
}

/** What a profile that no longer has a value is sent: no events counted is 0, anything else null. */
export function clearedValue(definition: ComputedTraitDefinition): string {
  return definition.type === 'count' ? '0' : 'null';
}

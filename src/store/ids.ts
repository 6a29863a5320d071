import { randomUUID } from 'node:crypto';

export type IdPrefix = 'src' | 'dst' | 'reg' | 'aud' | 'ctr' | 'flt' | 'tok' | 'adt' | 'opep' | 'tp' | 'tfm' | 'ifi';

/** `src_…`, `dst_…`, `reg_…`: the prefix tells a reader (and a log line) what kind of record an id names. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomUUID().replace(/-/g, '')}`;
}

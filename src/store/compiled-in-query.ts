import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import type { Tables } from './tables';

/**
 * A read by a list of ids (`where id_hash in (…)`), compiled once per list length and then run
 * with the ids as its parameters. The attempt path asks these for every message (erased ids,
 * suppressions, data keys), one to a few ids each time: building and compiling the query anew
 * was a share of each attempt's CPU. Only short lists are kept (the usual one to a few ids); a
 * long list is compiled as it comes.
 */
const KEPT_LENGTHS = 16;

export function compiledInQuery<Row>(db: Kysely<Tables>, build: (db: Kysely<Tables>, ids: string[]) => Compilable<Row>) {
  const byLength = new Map<number, CompiledQuery<Row>>();
  return async function run(ids: string[]): Promise<Row[]> {
    if (ids.length > KEPT_LENGTHS) return (await db.executeQuery(build(db, ids).compile())).rows;
    let compiled = byLength.get(ids.length);
    if (!compiled) {
      compiled = build(db, ids.map(() => '')).compile();
      // The ids must be the query's only parameters, in their order, for the compiled form to be reused.
      if (compiled.parameters.length !== ids.length) throw new Error('compiledInQuery: the query has parameters other than its ids');
      byLength.set(ids.length, compiled);
    }
    return (await db.executeQuery<Row>({ ...compiled, parameters: ids })).rows;
  };
}

/**
 * Whether a store's schema is the one this version of Switchyard needs, from the migrations it
 * knows and the ones the store records as applied (Kysely's `kysely_migration` table). Pure, so the
 * rule is table-tested; src/store/migrations.ts reads the names and acts on the answer.
 */
export interface SchemaProblems {
  /** Known migrations the store has not applied (in order). */
  pending: string[];
  /** Applied migrations this version does not know: a newer Switchyard migrated the store. */
  unknown: string[];
}

export function schemaProblems(known: readonly string[], applied: readonly string[]): SchemaProblems {
  const done = new Set(applied);
  const ours = new Set(known);
  return { pending: [...known].sort().filter((name) => !done.has(name)), unknown: [...applied].sort().filter((name) => !ours.has(name)) };
}

/** The start-up refusal: which store, what is wrong, and the command that fixes it. Undefined when nothing is. */
export function schemaProblemMessage(store: string, problems: SchemaProblems, migrateAtStart: boolean): string | undefined {
  if (problems.unknown.length > 0) {
    return `The store ${store} was migrated by a newer Switchyard: it has applied ${problems.unknown.join(', ')}, which this version does not know. Run that version (or a newer one) against it, or restore a backup taken before the upgrade.`;
  }
  if (problems.pending.length > 0 && !migrateAtStart) {
    return `The store ${store} is not migrated: ${problems.pending.join(', ')} ${problems.pending.length === 1 ? 'is' : 'are'} not applied, and DATABASE_MIGRATE=off keeps this process from applying ${problems.pending.length === 1 ? 'it' : 'them'}. Apply them with: npm run migrate (with the same DATABASE_URL or DATABASE_PATH), or start one process with DATABASE_MIGRATE=on.`;
  }
  return undefined;
}

import { runPersonasSync, type PersonasSyncInput, type PersonasSyncReport } from './personas-sync';

/**
 * Started by the computed trait's Temporal Schedule (or `POST /admin/computed-traits/:id/sync`):
 * sends an identify call with `{<snake_case name>: value}` to each user whose value changed since
 * the last sync.
 */
export async function syncComputedTrait(input: PersonasSyncInput): Promise<PersonasSyncReport> {
  return runPersonasSync(input);
}

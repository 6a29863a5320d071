import { runPersonasSync, type PersonasSyncInput, type PersonasSyncReport } from './personas-sync';

/**
 * Started by the audience's Temporal Schedule (or `POST /admin/audiences/:id/sync`): sends an
 * identify call with `{<snake_case name>: true}` to each user who joined since the last sync and
 * `false` to each who left; on the first sync, `true` to every member.
 */
export async function syncAudience(input: PersonasSyncInput): Promise<PersonasSyncReport> {
  return runPersonasSync(input);
}

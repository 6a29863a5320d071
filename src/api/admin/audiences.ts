import { Type } from '@sinclair/typebox';
import { checkAudienceDefinition } from '../../personas/definition';
import { computationRoutes } from './personas-routes';

/**
 * Audiences: `POST /admin/sources/:sourceId/audiences` `{name, definition, schedule?, paused?}`,
 * GET/PATCH/DELETE `/admin/audiences/:id`, `POST /admin/audiences/:id/sync`. Synced to the
 * source's webhook destinations as identify calls with a boolean trait (seed, Personas rules).
 */
export const audienceRoutes = computationRoutes({
  kind: 'audience',
  segment: 'audiences',
  listKey: 'audiences',
  noun: 'audience',
  check: (definition) => checkAudienceDefinition(definition),
  table: (store) => store.personas.audiences,
  definitionSchema: Type.Unknown({
    description:
      'A condition tree (docs/personas.md): {"trait", "op", "value"}; {"event", "count"?: {"op", "value"}, "within"?: "30d", "where"?: [{"property", "op", "value"}]}; {"all": [...]}; {"any": [...]}; {"not": {...}}. op: eq, neq, gt, gte, lt, lte, exists, contains.',
  }),
});

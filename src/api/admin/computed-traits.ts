import { Type } from '@sinclair/typebox';
import { checkComputedTraitDefinition } from '../../personas/definition';
import { computationRoutes } from './personas-routes';

/**
 * Computed traits: `POST /admin/sources/:sourceId/computed-traits` `{name, definition, schedule?,
 * paused?}`, GET/PATCH/DELETE `/admin/computed-traits/:id`, `POST /admin/computed-traits/:id/sync`.
 * A user's value is sent as an identify call when it changes.
 */
export const computedTraitRoutes = computationRoutes({
  kind: 'computed_trait',
  segment: 'computed-traits',
  listKey: 'computedTraits',
  noun: 'computed trait',
  check: (definition) => checkComputedTraitDefinition(definition),
  table: (store) => store.personas.computedTraits,
  definitionSchema: Type.Unknown({
    description:
      '{"type": count | sum | avg | min | max | most_frequent | first | last, "event": "Order Completed", "property"?: "total" (required except for count), "within"?: "180d"} (docs/personas.md).',
  }),
});

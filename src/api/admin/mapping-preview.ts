import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { previewMappings } from '../../mappings/preview';
import { previewedEvent } from '../../mappings/preview-event';
import type { Store } from '../../store/types';
import { badRequest, notFound } from '../errors';
import { acceptedActionsSettings } from './actions-settings';
import { MappingList } from './actions-schemas';
import { readTerraformSettings } from './terraform-settings';
import { errorReplies, IdParams } from './schemas';

const PreviewBody = Type.Object(
  {
    event: Type.Record(Type.String(), Type.Unknown(), { description: 'A Segment event (track, identify, …) as a source would send it.' }),
    mappings: Type.Optional(
      MappingList(
        'Draft mappings to preview instead of the saved ones, checked exactly as a save would check them (a 400 names the draft\'s mapping, field and directive); nothing is saved. Header values given as ******** keep the saved value, as on PATCH.',
      ),
    ),
  },
  { additionalProperties: false },
);

const PreviewView = Type.Object({
  mappings: Type.Array(
    Type.Object({
      name: Type.String(),
      enabled: Type.Boolean(),
      matched: Type.Boolean({ description: 'Whether the trigger matches the event (a disabled mapping sends nothing either way).' }),
      request: Type.Optional(
        Type.Object({ method: Type.String(), url: Type.String(), headers: Type.Record(Type.String(), Type.String(), { description: 'Secrets shown as ********.' }), body: Type.Unknown() }),
      ),
      error: Type.Optional(Type.String({ description: 'Why the mapping cannot render this event (the request would fail with this reason).' })),
    }),
  ),
});

/**
 * `POST /admin/destinations/:id/mappings/preview` renders each mapping for an event,
 * sending nothing. With `mappings`, the draft is rendered instead of the saved list, after
 * the same checks a save makes, so a draft can be tried without going live.
 */
export const mappingPreviewRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.post(
    '/destinations/:id/mappings/preview',
    { preValidation: readTerraformSettings, schema: { params: IdParams, body: PreviewBody, response: { 200: PreviewView, ...errorReplies } } },
    async (request) => {
      const destination = await store.destinations.get(request.params.id);
      if (!destination) throw notFound(`destination ${request.params.id}`);
      if (destination.type !== 'actions') throw badRequest('id: only an actions destination (type "actions") has mappings to preview');
      const draft = request.body.mappings && acceptedActionsSettings({ mappings: request.body.mappings }, destination).mappings;
      const mappings = draft ?? destination.mappings;
      // Rendered on the event as delivery would render it (the pipeline's fields, timestamps as Segment computes them).
      return { mappings: previewMappings(mappings, previewedEvent(request.body.event, Date.now()), { sharedSecret: destination.sharedSecret !== null, signing: destination.signing !== null, auth: destination.auth }) };
    },
  );
};

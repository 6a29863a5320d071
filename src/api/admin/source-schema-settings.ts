import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { controlsFrom, patchControls, TRACK_COMMON, TRAITS_COMMON, type SchemaControls } from '../../plans/schema-controls';
import type { Store } from '../../store/types';
import { audited } from '../access/audit-trail';
import { badRequest, notFound } from '../errors';
import { errorReplies, IdParams } from './schemas';

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

const Track = Type.Object(
  {
    allowUnplannedEvents: Type.Boolean(),
    allowUnplannedEventProperties: Type.Boolean(),
    allowEventOnViolations: Type.Boolean(),
    allowPropertiesOnViolations: Type.Boolean(),
    commonEventOnViolations: literals(TRACK_COMMON),
  },
  { additionalProperties: false },
);
const Traits = Type.Object({ allowUnplannedTraits: Type.Boolean(), allowTraitsOnViolations: Type.Boolean(), commonEventOnViolations: literals(TRAITS_COMMON) }, { additionalProperties: false });
const SourceRef = Type.String({ minLength: 1, maxLength: 100 });

const SettingsView = Type.Object({
  track: Track,
  identify: Traits,
  group: Traits,
  forwardingViolationsTo: Type.Optional(SourceRef),
  forwardingBlockedEventsTo: Type.Optional(SourceRef),
});

const SettingsPatch = Type.Object(
  {
    track: Type.Optional(Type.Partial(Track, { additionalProperties: false })),
    identify: Type.Optional(Type.Partial(Traits, { additionalProperties: false })),
    group: Type.Optional(Type.Partial(Traits, { additionalProperties: false })),
    forwardingViolationsTo: Type.Optional(Type.Union([SourceRef, Type.Null()], { description: 'A source id; null stops forwarding.' })),
    forwardingBlockedEventsTo: Type.Optional(Type.Union([SourceRef, Type.Null()], { description: 'A source id; null stops forwarding.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

const view = (controls: SchemaControls): Static<typeof SettingsView> => controls;

/**
 * A source's schema controls in Segment's shape (`GET/PATCH /sources/{id}/settings`
 * of its Public API). Unset, every control allows (report only), as on Segment. A forwarding
 * source must exist and be another source: forwarding into itself would loop.
 */
export const sourceSchemaSettingsRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const sourceOrNotFound = async (id: string) => {
    if (!(await store.sources.get(id))) throw notFound(`source ${id}`);
  };

  app.get('/sources/:id/settings', { schema: { params: IdParams, response: { 200: SettingsView, ...errorReplies } } }, async (request) => {
    await sourceOrNotFound(request.params.id);
    const saved = await store.trackingPlans.controls(request.params.id);
    return view(controlsFrom(saved === undefined ? undefined : (JSON.parse(saved) as Partial<SchemaControls>)));
  });

  app.patch('/sources/:id/settings', { schema: { params: IdParams, body: SettingsPatch, response: { 200: SettingsView, ...errorReplies } } }, async (request) => {
    const { id } = request.params;
    await sourceOrNotFound(id);
    for (const field of ['forwardingViolationsTo', 'forwardingBlockedEventsTo'] as const) {
      const target = request.body[field];
      if (target === undefined || target === null) continue;
      if (target === id) throw badRequest(`${field}: must be another source (forwarding a source's events into itself would loop)`);
      if (!(await store.sources.get(target))) throw badRequest(`${field}: source ${target} does not exist`);
    }
    const next = await audited(
      store,
      request,
      async (tx) => {
        const saved = await tx.trackingPlans.controls(id);
        const controls = patchControls(controlsFrom(saved === undefined ? undefined : (JSON.parse(saved) as Partial<SchemaControls>)), request.body);
        await tx.trackingPlans.setControls(id, JSON.stringify(controls));
        return controls;
      },
      { target: id },
    );
    return view(next);
  });
};

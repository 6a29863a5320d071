import { importRoutes } from './imports';
import type { FastifyPluginAsync } from 'fastify';
import { SETTINGS } from '../../config';
import type { Store } from '../../store/types';
import type { Cidr } from '../../delivery/egress';
import type { DeliveryPolicy } from '../../delivery/types';
import type { Deliveries, OperationalEvents, Replays, SyncSchedules } from '../../ports';
import type { Keyring } from '../../privacy/keyring';
import type { SigningOverlapEnds } from '../signing-overlaps';
import { audienceRoutes } from './audiences';
import { computedTraitRoutes } from './computed-traits';
import { deliveryRoutes } from './deliveries';
import { messageFateRoutes } from './message-fates';
import { redeliveryRoutes } from './redeliveries';
import type { AdminTokenFailures } from './auth';
import { authorizer, type Authorize } from '../access/authorize';
import { auditRoutes } from './audit';
import { tokenRoutes } from './tokens';
import { replayRoutes } from './replays';
import { destinationRoutes } from './destinations';
import { destinationFilterRoutes } from './destination-filters';
import { destinationTestRoutes } from './destination-test';
import { mappingPreviewRoutes } from './mapping-preview';
import { destinationHealthRoutes } from './destination-health';
import { operationalEndpointRoutes } from './operational-endpoints';
import { functionRoutes } from './functions';
import { insertFunctionInstanceRoutes } from './insert-function-instances';
import { transformationRoutes } from './transformations';
import type { SandboxPool } from '../../functions/sandbox-pool';
import { destinationOverviewRoutes } from './destination-overview';
import { regulationRoutes } from './regulations';
import { sourceRoutes } from './sources';
import { functionRequestRoutes } from './function-requests';
import { statusRoutes } from './status';
import { trackingPlanRoutes } from './tracking-plans';
import { sourceSchemaSettingsRoutes } from './source-schema-settings';
import { violationRoutes } from './violations';
import { namePlugins } from '../plugin-names';

export interface AdminOptions {
  store: Store;
  deliveries: Deliveries;
  adminToken: string;
  /** Wrong tokens per client address, shared with the portal and the codec server (none counted when absent). */
  adminTokenFailures?: AdminTokenFailures;
  /** The access check shared with the codec and the portal (buildApp's); made from adminToken and the store when absent. */
  authorize?: Authorize;
  /** Timing for the delete notifications regulations send. */
  policy: DeliveryPolicy;
  /** How long a rotated-out Standard Webhooks secret keeps signing (SIGNING_SECRET_OVERLAP; its default when absent). */
  signingSecretOverlapMs?: number;
  /** Told when a rotation's overlap ends, so the rotated-out secret is deleted then (absent: only the periodic look). */
  signingOverlaps?: SigningOverlapEnds;
  /** Audiences and computed traits need Temporal Schedules; without this port their routes are not served. */
  personas?: { schedules: SyncSchedules; defaultSchedule: string };
  /** Hashes user ids in what regulations leave in Temporal (delete notifications' ids); undefined with PAYLOAD_ENCRYPTION=off. */
  keyring: Keyring | undefined;
  /** Replays of the archive need their workflows; without this port their routes are not served. */
  replays?: { replays: Replays; archiveRetentionMs: number; maxInFlight: number };
  /** Where switching a webhook URL back on raises `endpoint.enabled` (none raised when absent). */
  operationalEvents?: OperationalEvents;
  /** EGRESS_ALLOWLIST: what a URL saved in a setting may point at besides public addresses (none when absent). */
  egressAllowlist?: Cidr[];
  /** Where a function's test run runs; without it the test route answers 503. */
  functionSandbox?: SandboxPool;
  /** PUBLIC_URL: the base of a source function's webhookUrl (empty: the admin request's own host). */
  publicUrl?: string;
}

/**
 * The admin API, one plugin per resource. The access check (token and scope) is a hook
 * on this plugin's context, so it guards every resource registered below it and nothing outside /admin.
 */
namePlugins({ tokenRoutes, auditRoutes, statusRoutes, sourceRoutes, functionRequestRoutes, importRoutes, trackingPlanRoutes, sourceSchemaSettingsRoutes, violationRoutes, destinationRoutes, destinationHealthRoutes, destinationOverviewRoutes, destinationFilterRoutes, destinationTestRoutes, operationalEndpointRoutes, functionRoutes, insertFunctionInstanceRoutes, transformationRoutes, mappingPreviewRoutes, regulationRoutes, deliveryRoutes, messageFateRoutes, redeliveryRoutes, replayRoutes, audienceRoutes, computedTraitRoutes });

export const adminRoutes: FastifyPluginAsync<AdminOptions> = async (app, { store, deliveries, adminToken, adminTokenFailures, authorize, policy, signingSecretOverlapMs, signingOverlaps, personas, keyring, replays, operationalEvents, egressAllowlist, functionSandbox, publicUrl }) => {
  app.addHook('onRequest', authorize ?? authorizer({ adminToken, failures: adminTokenFailures, tokens: store.tokens, audit: store.audit }));
  await app.register(tokenRoutes, { store });
  await app.register(auditRoutes, { store });
  await app.register(statusRoutes, { deliveries, store });
  await app.register(sourceRoutes, { store, publicUrl });
  await app.register(functionRequestRoutes, { store });
  await app.register(importRoutes, { store });
  await app.register(trackingPlanRoutes, { store });
  await app.register(sourceSchemaSettingsRoutes, { store });
  await app.register(violationRoutes, { store });
  await app.register(destinationRoutes, { store, deliveries, signingSecretOverlapMs: signingSecretOverlapMs ?? SETTINGS.signingSecretOverlap.parse(SETTINGS.signingSecretOverlap.default), signingOverlaps });

  await app.register(destinationHealthRoutes, { store, deliveries, operationalEvents });
  await app.register(destinationOverviewRoutes, {
    store,
    deliveries,
    filterTitles: async (destinationId) => new Map((await store.destinationFilters.list(destinationId)).map((filter) => [filter.id, filter.title])),
    transformationNames: async (sourceId) => new Map((await store.transformations.list(sourceId)).map((transformation) => [transformation.id, transformation.name])),
  });
  await app.register(destinationFilterRoutes, { store });
  await app.register(destinationTestRoutes, { store, deliveries, policy, keyring });
  await app.register(operationalEndpointRoutes, { store, egressAllowlist: egressAllowlist ?? [] });
  await app.register(functionRoutes, { store, sandbox: functionSandbox });
  await app.register(insertFunctionInstanceRoutes, { store });
  await app.register(transformationRoutes, { store });
  await app.register(mappingPreviewRoutes, { store });
  await app.register(regulationRoutes, { store, deliveries, policy, keyring });
  await app.register(deliveryRoutes, { store, deliveries, policy });
  await app.register(messageFateRoutes, { store, deliveries, keyring });
  await app.register(redeliveryRoutes, { store, deliveries });
  if (replays) await app.register(replayRoutes, { store, ...replays });
  if (personas) {
    await app.register(audienceRoutes, { store, ...personas });
    await app.register(computedTraitRoutes, { store, ...personas });
  }
};

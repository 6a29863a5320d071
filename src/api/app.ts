import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { deliveryPolicy, type Config } from '../config';
import { parseAllowlist } from '../delivery/egress';
import type { Store } from '../store/types';
import type { Keyring } from '../privacy/keyring';
import type { Deliveries } from '../ports';
import type { OperationalEvents, Replays, SyncSchedules } from '../ports';
import { installErrorHandler } from './errors';
import { lazySchemaCompilers } from './lazy-schema-compilers';
import { installJsonBodyParser, replyToClientError } from './json-body';
import { closeConnectionsWhileDraining } from './drain';
import { adminRoutes } from './admin';
import { createFunctionSandbox } from '../functions/function-sandbox';
import { ingestRoutes } from './ingest';
import { sourceFunctionWebhookRoutes } from './source-function-webhook';
import { healthRoutes } from './health';
import { allowBrowserOrigins } from './cors';
import { codecRoutes } from './codec';
import { adminTokenFailures } from './admin/auth';
import { authorizer } from './access/authorize';
import { recordGuardedRoutes } from './access/declared-access';
import { fastifyTrustProxy } from './client-address';
import { sourceSettingsRoutes } from './source-settings';
import { MAX_BATCH_BYTES } from '../messages/call-rules';
import { createMetrics, type Metrics } from '../metrics';
import { serveMetricsRoute } from './metrics';
import { portalRoutes } from '../portal/routes';
import { requestLogValue } from './request-log';
import { documentRoutes } from './route-docs';
import { signingOverlapSweep } from './signing-overlaps';
import { archiveRetention } from './archive-retention';
import { auditRetention } from './audit-retention';
import { VERSION } from '../version';
import { namePlugins } from './plugin-names';

export interface AppOptions {
  config: Config;
  store: Store;
  deliveries: Deliveries;
  /** Temporal Schedules of audiences and computed traits (the Personas admin routes need it). */
  schedules?: SyncSchedules;
  /** Replays' workflows (the replay admin routes need it). */
  replays?: Replays;
  logger?: Logger | false;
  /** The process's metrics (`npm start` shares them with its worker); a fresh set without Node's default metrics when absent. */
  metrics?: Metrics;
  /** The payload keys the codec server decrypts with (undefined: PAYLOAD_ENCRYPTION=off). */
  keyring?: Keyring;
  /** Operational events the admin API raises (a webhook URL switched back on); none when absent. */
  operationalEvents?: OperationalEvents;
  /** Only `npm start`: the codec server answers tokenless requests over loopback (src/api/codec.ts). */
  codecOpenToLoopback?: boolean;
}

namePlugins({ healthRoutes, ingestRoutes, sourceFunctionWebhookRoutes, sourceSettingsRoutes, adminRoutes, codecRoutes, portalRoutes });

/** The whole HTTP API as one Fastify instance; tests drive it with `app.inject`, `server.ts` listens. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  // The instance's own `req` serializer wins over Fastify's: request lines censor ?userId= values.
  const loggerInstance: FastifyBaseLogger | undefined = options.logger ? options.logger.child({}, { serializers: { req: requestLogValue } }) : undefined;
  const app = Fastify({
    ...(loggerInstance ? { loggerInstance } : { logger: false }),
    // Seed limit: a batch request carries at most 500 KB (gzip is measured after inflating).
    bodyLimit: MAX_BATCH_BYTES,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, allowUnionTypes: true } },
    // Each route's schemas compiled on its first call, not all at the start (lazy-schema-compilers.ts).
    schemaController: lazySchemaCompilers(),
    clientErrorHandler: replyToClientError,
    // TRUST_PROXY: whether X-Forwarded-For/-Proto/-Host count for request.ip (context.ip, the per-address limits) and the settings route's host.
    trustProxy: fastifyTrustProxy(options.config.trustProxy),
    // Slowloris defence. Fastify sets requestTimeout once the server exists; createServer needs it too, to accept
    // headersTimeout beside it. Node checks both every connectionsCheckingInterval: once a second keeps a 408 near its deadline.
    requestTimeout: options.config.httpRequestTimeout,
    http: { headersTimeout: options.config.httpHeadersTimeout, requestTimeout: options.config.httpRequestTimeout, connectionsCheckingInterval: 1_000 },
  }).withTypeProvider<TypeBoxTypeProvider>();
  installErrorHandler(app);
  installJsonBodyParser(app);
  closeConnectionsWhileDraining(app);
  // Every route's JSON schema validates requests and serializes replies; together they are the API document.
  await app.register(swagger, {
    openapi: {
      info: { title: 'Switchyard', version: VERSION, description: 'Segment-compatible ingestion and webhook destination admin API' },
      components: {
        securitySchemes: {
          writeKey: { type: 'http', scheme: 'basic', description: 'Write key as username, empty password' },
          adminToken: { type: 'http', scheme: 'bearer' },
        },
      },
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The reference UI; its assets come from the swagger-ui-dist package, served here (no CDN).
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true }, staticCSP: true });
  documentRoutes(app);
  recordGuardedRoutes(app);
  // Runs after the server has stopped taking requests and those in flight have finished.
  app.addHook('onClose', () => options.deliveries.drain());
  const metrics = options.metrics ?? createMetrics({ defaultMetrics: false });
  serveMetricsRoute(app, metrics, options.store);
  await allowBrowserOrigins(app, options.config);
  await app.register(healthRoutes, { deliveries: options.deliveries, store: options.store });
  await app.register(ingestRoutes, { store: options.store, deliveries: options.deliveries, config: options.config, metrics, keyring: options.keyring });
  await app.register(sourceFunctionWebhookRoutes, { store: options.store, deliveries: options.deliveries, config: options.config, keyring: options.keyring });
  await app.register(sourceSettingsRoutes, { store: options.store, config: options.config });
  // One count of wrong admin tokens per client address, wherever the token is presented, and one
  // access check (token, scope, denied attempts into the audit log) for admin, codec and portal.
  const authorize = authorizer({ adminToken: options.config.adminToken, failures: adminTokenFailures(options.config), tokens: options.store.tokens, audit: options.store.audit, trustProxy: options.config.trustProxy });
  // Rotated-out signing secrets leave the store when their overlap ends.
  const signingOverlaps = signingOverlapSweep(options.store.destinations, app.log);
  app.addHook('onReady', async () => signingOverlaps.start());
  app.addHook('onClose', () => signingOverlaps.stop());
  // The archive's retention (and, on PostgreSQL, its coming days' partitions).
  const retention = archiveRetention(options.store.archive, options.config.archiveRetention, app.log, undefined, options.store.fates);
  app.addHook('onReady', async () => retention.start());
  app.addHook('onClose', () => retention.stop());
  // The audit log's rows past AUDIT_RETENTION (0: kept for ever).
  const auditRows = auditRetention(options.store.audit, options.config.auditRetention, app.log);
  app.addHook('onReady', async () => auditRows.start());
  app.addHook('onClose', () => auditRows.stop());
  // Functions' test runs; the sandbox's threads start only when a function first runs.
  const functionSandbox = createFunctionSandbox(options.config);
  app.addHook('onClose', () => functionSandbox.close());
  await app.register(adminRoutes, { prefix: '/admin', store: options.store, deliveries: options.deliveries, adminToken: options.config.adminToken, authorize, policy: deliveryPolicy(options.config), signingSecretOverlapMs: options.config.signingSecretOverlap, signingOverlaps, personas: options.schedules && { schedules: options.schedules, defaultSchedule: options.config.personasSyncSchedule }, keyring: options.keyring, replays: options.replays && { replays: options.replays, archiveRetentionMs: options.config.archiveRetention, maxInFlight: options.config.replayMaxInFlight }, operationalEvents: options.operationalEvents, egressAllowlist: parseAllowlist(options.config.egressAllowlist), functionSandbox, publicUrl: options.config.publicUrl });
  await app.register(codecRoutes, { prefix: '/codec', keyring: options.keyring, dataKeys: options.store.dataKeys, authorize, corsOrigins: options.config.codecCorsOrigins, openToLoopback: options.codecOpenToLoopback, audit: options.store.audit });
  await app.register(portalRoutes, {
    authorize,
    temporalUiUrl: options.config.temporalUiUrl || `http://127.0.0.1:${options.config.temporalUiPort}`,
    temporalNamespace: options.config.temporalNamespace,
    publicUrl: options.config.publicUrl,
  });
  return app;
}

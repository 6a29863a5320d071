import { deliveryPolicy, type Config } from '../config';
import { parseAllowlist } from '../delivery/egress';
import type { OperationalEvents, RedeliveryRuns, ReplayDeliveries, StartDelivery, SyncSchedules } from '../ports';
import { makeOperationalActivities, webhookSwitchedOff } from './operational-events';
import type { Keyring } from '../privacy/keyring';
import type { Store } from '../store/types';
import { makeAttemptWebhook } from './attempt-webhook';
import { stoppingErasedUsers } from './erased-users';
import { WebhookTraffic } from './webhook-traffic';
import { makePersonasActivities, type PersonasConfig } from './personas';
import { makeRedeliveryActivities } from './redeliver-matching';
import { makeReplayActivities } from './replay-archive';
import { LiveLag } from './live-lag';
import { createWebhookAgent } from './post-webhook';
import { OAuth2Tokens } from './oauth2-tokens';
import { webhookAgents } from './webhook-agents';
import type { AttemptRecorder } from './health-recorder';
import type { Metrics } from '../metrics';
import type { IngestDependencies } from '../messages/ingest-calls';
import { makeForwardingActivities } from './forward-calls';
import { makeAttemptFunction } from './attempt-function';
import { makeInsertFunction } from './insert-function';
import { makeSourceFunctionActivities } from './source-function';
import type { SandboxPool } from '../functions/sandbox-pool';

/**
 * A first attempt runs as a local activity only while its webhook answers within this long: a
 * local activity holds its workflow task, so a slow one would hold up the worker's other work.
 */
const LOCAL_ATTEMPT_BUDGET_MS = 1_000;

/** Where no replay can run (a test worker without Temporal for them): any replay page fails. */
const noReplays: ReplayDeliveries = {
  start: () => Promise.reject(new Error('this worker starts no replay deliveries')),
  recover: () => Promise.reject(new Error('this worker starts no replay deliveries')),
  outcome: () => Promise.reject(new Error('this worker reads no replay deliveries')),
};

/**
 * The I/O the workflows call, bound to this worker's store and HTTP pool. Personas syncs start
 * delivery workflows and retire their schedules through `temporal`, ports the worker wires to Temporal.
 */
export function createActivities(
  store: Store,
  config: Pick<Config, 'egressAllowlist' | 'deliveryTimeout' | 'workerMaxInFlightPerWebhook' | 'deliveryRetryWindow' | 'archiveRetention' | 'replayLiveLagLimit'> & PersonasConfig,
  /** `keyring`: hashes the user ids that go into what Temporal shows (Personas message ids); undefined with PAYLOAD_ENCRYPTION=off. */
  temporal: { startDelivery: StartDelivery; schedules: Pick<SyncSchedules, 'delete'>; redeliveries: RedeliveryRuns; replays?: ReplayDeliveries; keyring: Keyring | undefined; operationalEvents?: OperationalEvents; forwardedIngest?: () => IngestDependencies; sourceFunctionIngest?: () => IngestDependencies },
  metrics?: Metrics,
  health?: AttemptRecorder,
  /** Where destination functions run (function-sandbox.ts); without it their attempts are retried with that reason. */
  functionSandbox?: SandboxPool,
) {
  const allowlist = parseAllowlist(config.egressAllowlist);
  const agent = createWebhookAgent(allowlist, config.deliveryTimeout);
  // Mutual TLS pools per client certificate, and the worker-wide OAuth2 token cache.
  const outbound = { agentFor: webhookAgents(agent, (tls) => createWebhookAgent(allowlist, config.deliveryTimeout, tls)), tokens: new OAuth2Tokens(agent) };
  // Live traffic first: this worker's live first sends pace the replay pages it runs.
  const liveLag = new LiveLag();
  return {
    attemptWebhook: stoppingErasedUsers(store, makeAttemptWebhook(store, agent, new WebhookTraffic(config.workerMaxInFlightPerWebhook, LOCAL_ATTEMPT_BUDGET_MS), metrics, health, config.deliveryRetryWindow, outbound, liveLag, temporal.operationalEvents && webhookSwitchedOff(store, temporal.operationalEvents), makeAttemptFunction(store, functionSandbox, (destination, reason) => metrics?.messagesFiltered.inc({ destination, reason })), makeInsertFunction(store, functionSandbox, (destination, reason) => metrics?.messagesFiltered.inc({ destination, reason })))),
    // Operational events, sent through the same egress-guarded agent as webhooks.
    ...makeOperationalActivities(store, agent, config.deliveryTimeout, temporal.operationalEvents),
    ...makePersonasActivities(store, config, temporal),
    ...makeRedeliveryActivities(store, deliveryPolicy(config), temporal.redeliveries),
    ...makeReplayActivities(store, deliveryPolicy(config), temporal.keyring, temporal.replays ?? noReplays, config.archiveRetention, { liveLag, limitMs: config.replayLiveLagLimit }),
    // A tracking plan's forwarding jobs: the target's whole ingest path, on the worker.
    ...makeForwardingActivities(store, temporal.forwardedIngest),
    // Source functions' webhook requests: onRequest in the sandbox, what it emits through the same ingest path.
    ...makeSourceFunctionActivities(store, functionSandbox, temporal.sourceFunctionIngest, temporal.keyring !== undefined),
  };
}

export type Activities = ReturnType<typeof createActivities>;

import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { parseAllowlist } from '../delivery/egress';
import type { Store } from '../store/types';
import { makeAttemptWebhook } from './attempt-webhook';
import { WebhookTraffic } from './webhook-traffic';
import { makePersonasActivities, type PersonasConfig } from './personas';
import { createWebhookAgent } from './post-webhook';

/**
 * A first attempt runs as a local activity only while its webhook answers within this long: a
 * local activity holds its workflow task, so a slow one would hold up the worker's other work.
 */
const LOCAL_ATTEMPT_BUDGET_MS = 1_000;

/** The I/O the workflows call, bound to this worker's store and HTTP pool. */
export function createActivities(store: Store, config: Pick<Config, 'egressAllowlist' | 'workerMaxInFlightPerWebhook'> & PersonasConfig, client: Client) {
  const agent = createWebhookAgent(parseAllowlist(config.egressAllowlist));
  return {
    attemptWebhook: makeAttemptWebhook(store, agent, new WebhookTraffic(config.workerMaxInFlightPerWebhook, LOCAL_ATTEMPT_BUDGET_MS)),
    // Personas syncs start delivery workflows themselves, so they get a Temporal client.
    ...makePersonasActivities(store, config, client),
  };
}

export type Activities = ReturnType<typeof createActivities>;

import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { parseAllowlist } from '../delivery/egress';
import type { Store } from '../store/types';
import { makeAttemptWebhook } from './attempt-webhook';
import { makePersonasActivities, type PersonasConfig } from './personas';
import { createWebhookAgent } from './post-webhook';

/** The I/O the workflows call, bound to this worker's store and HTTP pool. */
export function createActivities(store: Store, config: Pick<Config, 'egressAllowlist'> & PersonasConfig, client: Client) {
  const agent = createWebhookAgent(parseAllowlist(config.egressAllowlist));
  return {
    attemptWebhook: makeAttemptWebhook(store, agent),
    // Personas syncs start delivery workflows themselves, so they get a Temporal client.
    ...makePersonasActivities(store, config, client),
  };
}

export type Activities = ReturnType<typeof createActivities>;

import type { Config } from '../config';
import { parseAllowlist } from '../delivery/egress';
import type { Store } from '../store/types';
import { makeAttemptWebhook } from './attempt-webhook';
import { createWebhookAgent } from './post-webhook';

/** The I/O the workflows call, bound to this worker's store and HTTP pool. */
export function createActivities(store: Store, config: Pick<Config, 'egressAllowlist'>) {
  const agent = createWebhookAgent(parseAllowlist(config.egressAllowlist));
  return {
    attemptWebhook: makeAttemptWebhook(store, agent),
  };
}

export type Activities = ReturnType<typeof createActivities>;

import type { Client } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/workflows/search-attributes';

/**
 * Starts a throwaway workflow (no worker; it times out within a second) carrying every Switchyard
 * search attribute, as each delivery start does: Temporal's frontend refuses it ("no mapping defined
 * for search attribute") until its namespace cache has them all. Resolves with the run id.
 */
export async function startCarryingEverySearchAttribute(client: Client, workflowId: string): Promise<string> {
  const handle = await client.workflow.start('readinessProbe', {
    taskQueue: 'switchyard-readiness-probe',
    workflowId,
    workflowExecutionTimeout: '1s',
    typedSearchAttributes: ALL_SEARCH_ATTRIBUTES.map((key) => (key.type === SearchAttributeType.KEYWORD_LIST ? { key, value: ['readiness'] } : { key, value: 'readiness' })),
  });
  return handle.firstExecutionRunId;
}

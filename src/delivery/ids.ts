/** One workflow per (source, messageId): a message re-sent with the same messageId maps to the same workflow. */
export function deliveryWorkflowId(sourceId: string, messageId: string): string {
  return `message:${sourceId}:${messageId}`;
}

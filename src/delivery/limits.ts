/**
 * Seed limits: up to 5 webhook URLs per destination, up to 5 static headers per webhook. Alone in
 * this file so the delivery workflow can import them (webhook-rules.ts pulls in node:crypto).
 */
export const MAX_WEBHOOKS = 5;
export const MAX_HEADERS = 5;

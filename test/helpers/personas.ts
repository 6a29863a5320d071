import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { PersonasSyncReport } from '../../src/workflows/personas-sync';
import type { ReceivedRequest, Receiver } from './receiver';
import { ADMIN_TOKEN, basicAuth } from './system';

/** A schedule that will not fire during a test run (once a year), so only the syncs a test asks for run. */
export const NEVER = '0 0 1 1 *';

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

export async function admin(app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  const response = await app.inject({ method, url: `/admin${url}`, headers: auth, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
}

/** Creates an audience or computed trait through the admin API and returns its view (expects 201). */
export async function createDefinition(app: FastifyInstance, sourceId: string, segment: 'audiences' | 'computed-traits', body: Record<string, unknown>) {
  const response = await admin(app, 'POST', `/sources/${sourceId}/${segment}`, body);
  if (response.status !== 201) throw new Error(`create ${segment} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body as { id: string; key: string; scheduleId: string; sourceId: string };
}

/** POST .../:id/sync, then waits for that sync (across continue-as-new) and returns its report. */
export async function syncNow(app: FastifyInstance, client: Client, segment: 'audiences' | 'computed-traits', id: string): Promise<PersonasSyncReport> {
  const response = await admin(app, 'POST', `/${segment}/${id}/sync`);
  if (response.status !== 202) throw new Error(`sync answered ${response.status}: ${JSON.stringify(response.body)}`);
  const { workflowId, runId } = response.body as { workflowId: string; runId: string };
  return (await client.workflow.getHandle(workflowId, runId).result()) as PersonasSyncReport;
}

/** Sends calls through the real ingestion API as one batch. */
export async function ingestBatch(app: FastifyInstance, writeKey: string, batch: Record<string, unknown>[]) {
  const response = await app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } });
  if (response.statusCode !== 200) throw new Error(`/v1/batch answered ${response.statusCode}: ${response.body}`);
}

export interface PersonasMessage {
  request: ReceivedRequest;
  body: {
    type: string;
    messageId: string;
    userId?: string;
    anonymousId?: string;
    traits: Record<string, unknown>;
    context: { personas?: { computation_id: string; computation_key: string; computation_class: string } };
  };
}

/** The identify calls a receiver got from one audience or computed trait. */
export function messagesOf(receiver: Receiver, computationId: string): PersonasMessage[] {
  return receiver.requests
    .map((request) => ({ request, body: JSON.parse(request.body) as PersonasMessage['body'] }))
    .filter((m) => m.body.context?.personas?.computation_id === computationId);
}

/** Waits until exactly `count` messages of the computation arrived, then a moment more to catch any extra. */
export async function expectMessages(receiver: Receiver, computationId: string, count: number, settleMs = 1_500): Promise<PersonasMessage[]> {
  const until = Date.now() + 30_000;
  while (messagesOf(receiver, computationId).length < count) {
    if (Date.now() > until) throw new Error(`expected ${count} messages of ${computationId}, got ${messagesOf(receiver, computationId).length}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const messages = messagesOf(receiver, computationId);
  if (messages.length !== count) throw new Error(`expected exactly ${count} messages of ${computationId}, got ${messages.length}`);
  return messages;
}

/** userId (or anonymousId) → the trait value each message carried, for compact assertions. */
export function valuesByUser(messages: PersonasMessage[], key: string): Record<string, unknown> {
  return Object.fromEntries(messages.map((m) => [m.body.userId ?? `anon:${m.body.anonymousId}`, m.body.traits[key]]));
}

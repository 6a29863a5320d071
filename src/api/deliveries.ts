import type { DeliveryInput } from '../delivery/types';

/** What the API needs from Temporal: durable starts of delivery workflows, and readiness. */
export interface Deliveries {
  /**
   * Resolves only when Temporal has accepted (or already has) a workflow for every input. Past
   * `deadline` (epoch ms) no call is retried and no new start begins.
   */
  start(inputs: DeliveryInput[], deadline?: number): Promise<void>;
  /** Resolves once no Temporal call is under way; the app's close awaits it before the connection closes. */
  drain(): Promise<void>;
  health(): Promise<{ temporal: boolean; worker: boolean }>;
  /** Deletes the closed delivery workflows of these users (their events live in workflow history). Returns how many. */
  forgetUsers(userIds: string[]): Promise<number>;
}

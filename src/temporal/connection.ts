import { Client, Connection } from '@temporalio/client';

/** Connects to Temporal, waiting for a server that is still starting (dev server, compose start-up order). */
export async function connectClient(address: string, namespace: string, waitMs = 60_000): Promise<Client> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      await connection.workflowService.getSystemInfo({});
      return new Client({ connection, namespace });
    } catch (err) {
      if (Date.now() > until) throw new Error(`Temporal at ${address} not reachable: ${(err as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

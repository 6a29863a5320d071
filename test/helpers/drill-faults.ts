import type { Fault, HealthReading } from './fault-drill';
import { sleep, startOwnApi, type OwnApi } from './faults';
import { waitFor } from './processes';
import type { Receiver } from './receiver';
import type { TcpRelay } from './tcp-relay';

/**
 * The faults of the fault matrix (docs/reliability.md), each a `Fault` for test/helpers/fault-drill.ts: it injects the
 * fault, waits for its length, heals it and resolves. What /health and /admin/status must show meanwhile is beside it.
 */

/** What shows while the store is away: /health 503, /admin/status naming the store. */
export const storeAway = (reading: HealthReading) => reading.status === 503 && reading.store === false && names(reading, 'store');

/** What shows while Temporal is out of reach: /health 503, /admin/status naming Temporal. */
export const temporalAway = (reading: HealthReading) => reading.status === 503 && reading.temporal === false && names(reading, 'temporal');

const names = (reading: HealthReading, dependency: string) => (reading.problems ?? []).some((problem) => problem.startsWith(`${dependency}: `));

/** PostgreSQL restarts: stopped in `mode`, started again `downMs` later on the same port and data. */
export const postgresRestarts = (restart: (mode: 'fast' | 'immediate', downMs: number) => Promise<void>, modes: ('fast' | 'immediate')[], downMs: number, shows?: Fault['shows']): Fault[] =>
  modes.map((mode) => ({ name: `PostgreSQL restart (${mode})`, apply: () => restart(mode, downMs), shows }));

/** The network between `who` and Temporal cut for `ms` (a relay resets open connections and refuses new ones). */
export const relayCut = (relay: TcpRelay, who: 'workers' | 'API' | 'APIs', ms: number): Fault => ({
  name: `${who} cut off Temporal for ${ms / 1000} s`,
  async apply() {
    relay.cut();
    await sleep(ms);
    relay.restore();
  },
  // Workers cut off leave /health at 200 (the API takes calls; /admin/status names them after
  // HEALTH_POLLER_WINDOW); an API cut off must say so.
  shows: who === 'workers' ? undefined : temporalAway,
});

/**
 * `apis[n]` SIGKILLed while a call to it is in flight, and started again on its port with its
 * environment; the new process takes its place in `apis`. Calls cut off get a connection error,
 * which the drill's sender retries (as Segment's libraries do).
 */
export const apiKill = (apis: OwnApi[], n: number): Fault => ({
  name: `API ${n + 1} SIGKILL mid-request, restarted`,
  async apply(drill) {
    const victim = apis[n];
    // Bounded: at a few calls a second one is in flight within moments; if not, the kill still counts.
    await waitFor(() => {
      if (drill.inFlight(victim.url) === 0) throw new Error('no call in flight');
    }, 10_000).catch(() => undefined);
    victim.process.kill('SIGKILL');
    await victim.exited;
    apis[n] = await startOwnApi(victim.env, victim.logFile, victim.port);
  },
});

/**
 * The receiver accepts each connection and reads the request, then never answers, for `ms`:
 * attempts time out (DELIVERY_TIMEOUT) and are retried; once it answers again each is delivered.
 * Requests it left unanswered are marked `hung` and do not count as deliveries.
 */
export const receiverHang = (receiver: Receiver, ms: number): Fault => ({
  name: `receiver accepts and never answers for ${ms / 1000} s`,
  async apply() {
    const answering = receiver.responder();
    receiver.respond(() => ({ status: 200, hang: true }));
    await sleep(ms);
    receiver.respond(answering);
  },
});

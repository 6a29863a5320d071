import net from 'node:net';

/**
 * The ports `npm start` binds itself (its embedded Temporal dev server and its API), checked before
 * anything starts. A port already taken means another program, often another Temporal server, is
 * there: connecting to it would hand that server's tasks to this worker. So a taken port refuses
 * the start at once, naming the port and the variable that moves it.
 */
export interface OwnPort {
  port: number;
  host: string;
  /** The configuration variable that moves this port. */
  variable: string;
  /** What binds it, for the message. */
  what: string;
}

/** The ports an embedded start binds, from the configuration (pure). */
export function embeddedPorts(config: { temporalAddress: string; temporalUiPort: number; port: number; host: string }): OwnPort[] {
  const { host, port } = splitAddress(config.temporalAddress);
  return [
    { port, host, variable: 'TEMPORAL_ADDRESS', what: 'the embedded Temporal server' },
    { port: config.temporalUiPort, host, variable: 'TEMPORAL_UI_PORT', what: "the embedded Temporal server's Web UI" },
    { port: config.port, host: config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host, variable: 'PORT', what: 'the Switchyard API' },
  ];
}

/** `host:port` (a bracketed IPv6 host allowed); `localhost` is probed as 127.0.0.1, where the dev server listens. */
export function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  const rawHost = at > 0 ? address.slice(0, at).replace(/^\[|\]$/g, '') : '127.0.0.1';
  const host = rawHost === 'localhost' || rawHost === '' ? '127.0.0.1' : rawHost;
  return { host, port: Number(address.slice(at + 1)) };
}

/** The message for a taken port: which port, what wanted it, the variable that moves it, and how to use the other server on purpose. */
export function takenPortMessage(taken: OwnPort): string {
  const alternative =
    taken.variable === 'TEMPORAL_ADDRESS'
      ? ` Set TEMPORAL_ADDRESS=127.0.0.1:<a free port> to run Switchyard's own Temporal server there, or EMBEDDED_TEMPORAL=false with TEMPORAL_ADDRESS=${taken.host}:${taken.port} to use the server already there on purpose.`
      : ` Set ${taken.variable} to a free port.`;
  return `port ${taken.port} on ${taken.host} is already in use, so ${taken.what} cannot listen there; Switchyard never joins a server it did not start.${alternative}`;
}

/** Whether something holds the port: a listen on it fails, or a connection to it is answered. */
export async function portTaken(host: string, port: number): Promise<boolean> {
  if (!(await canListen(host, port))) return true;
  return answers(host, port);
}

/** The first of `ports` already taken, or undefined when all are free. */
export async function firstTakenPort(ports: OwnPort[]): Promise<OwnPort | undefined> {
  for (const own of ports) if (await portTaken(own.host, own.port)) return own;
  return undefined;
}

function canListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A listener on another address of the same port (`::1` for `localhost`) still answers: that counts as taken too. */
function answers(host: string, port: number): Promise<boolean> {
  const hosts = host === '127.0.0.1' ? ['127.0.0.1', '::1'] : [host];
  return Promise.all(
    hosts.map(
      (h) =>
        new Promise<boolean>((resolve) => {
          const socket = net.connect({ host: h, port });
          socket.setTimeout(1_000);
          socket.once('connect', () => {
            socket.destroy();
            resolve(true);
          });
          socket.once('timeout', () => {
            socket.destroy();
            resolve(false);
          });
          socket.once('error', () => resolve(false));
        }),
    ),
  ).then((found) => found.some(Boolean));
}

/**
 * The dev server prints its banner (`Server:  localhost:7233`) only once it listens. Until then a
 * server answering on the port is someone else's (the CLI may still be building): the client and
 * worker connect only after this resolves. Rejects when the dev server exits first.
 */
export function devServerListening(child: { stdout: NodeJS.ReadableStream | null; once(event: 'exit', listener: (code: number | null) => void): unknown }): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-4_096);
      if (bannerSaysListening(seen)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the embedded Temporal server exited (code ${code}) before it was listening`)));
  });
}

/** Whether the dev server's output so far holds its "Server:" banner line (pure). */
export function bannerSaysListening(output: string): boolean {
  return /^\s*(?:Temporal )?Server:\s+\S+:\d+/m.test(output);
}

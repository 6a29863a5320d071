import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A port that a process will bind only seconds from now (one that waits for Temporal before it
 * listens). A port from `freePort` is from Linux's ephemeral range, where the kernel hands out ports
 * for other processes' outgoing connections and `listen(0)` in the meantime: wait-for-temporal's API
 * met EADDRINUSE 15 s after its port was chosen. This one is drawn from 10,000–11,999: below the
 * ephemeral range (32768+) and below where a real Temporal server's ports are drawn
 * (test/helpers/real-temporal.ts, 12,000 up), so nothing takes it unasked.
 */
export async function portBoundLater(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 2_000);
    if (await canListen(port)) return port;
  }
  throw new Error('no free port in 10,000–11,999');
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

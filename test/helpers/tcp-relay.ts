import net from 'node:net';

/**
 * A TCP relay on loopback to `target` ("host:port") that a test controls: `cut()` resets every
 * open connection and every new one until `restore()`, as a server gone away or a network cut does,
 * while the server behind keeps running — a fault a test can repeat in milliseconds.
 */
export interface TcpRelay {
  /** `127.0.0.1:<port>`: what the process under test connects to instead of `target`. */
  address: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(target: string): Promise<TcpRelay> {
  const at = target.lastIndexOf(':');
  const host = target.slice(0, at);
  const port = Number(target.slice(at + 1));
  const open = new Set<net.Socket>();
  let cutOff = false;

  const server = net.createServer((inbound) => {
    if (cutOff) {
      inbound.resetAndDestroy();
      return;
    }
    const outbound = net.connect(port, host);
    for (const socket of [inbound, outbound]) {
      open.add(socket);
      // Either side ending ends both: a half-open pair would look like a silent server.
      socket.once('close', () => {
        open.delete(socket);
        inbound.destroy();
        outbound.destroy();
      });
      socket.on('error', () => undefined);
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: listening } = server.address() as net.AddressInfo;

  return {
    address: `127.0.0.1:${listening}`,
    cut() {
      cutOff = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    restore() {
      cutOff = false;
    },
    close() {
      for (const socket of open) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

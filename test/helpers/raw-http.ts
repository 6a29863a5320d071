import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RawReply {
  /** Everything the server wrote before it closed the connection (latin1). */
  text: string;
  /** The status of the first reply, or undefined when the server wrote none. */
  status?: number;
  contentType?: string;
  body: string;
  /** From the first byte written to the connection's close. */
  elapsedMs: number;
}

/** The reply's head and what follows it, once the head is complete. */
function split(text: string): { head: string; body: string } | undefined {
  const end = text.indexOf('\r\n\r\n');
  return end < 0 ? undefined : { head: text.slice(0, end), body: text.slice(end + 4) };
}

const header = (head: string, name: string) => new RegExp(`\\r\\n${name}: ([^\\r]+)`, 'i').exec(head)?.[1];

function parse(text: string, elapsedMs: number): RawReply {
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1];
  const { head, body } = split(text) ?? { head: text, body: '' };
  return { text, status: status === undefined ? undefined : Number(status), contentType: header(head, 'content-type'), body, elapsedMs };
}

function replyComplete(text: string): boolean {
  const reply = split(text);
  if (!reply) return false;
  const length = header(reply.head, 'content-length');
  return length !== undefined && Buffer.byteLength(reply.body, 'latin1') >= Number(length);
}

/**
 * One HTTP exchange on a fresh socket, written as raw bytes (what Node's parser sees before
 * Fastify runs): the pieces are written `gapMs` apart, then the reply is read until it is complete
 * or the server closes. Rejects if nothing closes the connection within `timeoutMs`.
 */
export function rawExchange(port: number, pieces: Array<Buffer | string>, options: { gapMs?: number; timeoutMs?: number } = {}): Promise<RawReply> {
  const { gapMs = 0, timeoutMs = 10_000 } = options;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => resolve(parse(Buffer.concat(chunks).toString('latin1'), Date.now() - started));
    socket.on('data', (c) => {
      chunks.push(c);
      // A complete reply ends the exchange even if the server keeps the connection alive.
      if (replyComplete(Buffer.concat(chunks).toString('latin1'))) socket.destroy();
    });
    socket.on('end', done);
    socket.on('close', done);
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? done() : reject(err)));
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no reply within ${timeoutMs} ms`)));
    void (async () => {
      for (const [i, piece] of pieces.entries()) {
        if (i > 0 && gapMs > 0) await sleep(gapMs);
        if (socket.destroyed) return;
        socket.write(piece);
      }
    })();
  });
}

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

function parse(text: string, elapsedMs: number): RawReply {
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1];
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  return {
    text,
    status: status === undefined ? undefined : Number(status),
    contentType: /\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1],
    body: end < 0 ? '' : text.slice(end + 4),
    elapsedMs,
  };
}

function replyComplete(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, Math.max(end, 0)))?.[1];
  return end >= 0 && length !== undefined && Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(length);
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

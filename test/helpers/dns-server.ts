import dgram from 'node:dgram';
import ipaddr from 'ipaddr.js';

/** What the server answers for one name: its addresses (A and AAAA by their form), or nothing ever. */
export type DnsAnswer = string[] | 'hang';

export interface DnsServer {
  /** `127.0.0.1:port`, for a resolver's setServers. */
  address: string;
  /** Queries received, as `name type` (e.g. `hooks.test A`). */
  queries: string[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

/**
 * A real DNS server on 127.0.0.1 (UDP, RFC 1035 wire format), just enough for a resolver: it
 * answers A and AAAA queries for the names it is given, never answers a name marked `hang`, and
 * answers NXDOMAIN for every other name.
 */
export async function startDnsServer(names: Record<string, DnsAnswer>): Promise<DnsServer> {
  const socket = dgram.createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (query, peer) => {
    // The question: labels from offset 12 up to the zero length, then type and class.
    const labels: string[] = [];
    let at = 12;
    while (query[at] !== 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]).toString('latin1'));
      at += 1 + query[at];
    }
    const type = query.readUInt16BE(at + 1);
    const questionEnd = at + 5;
    const name = labels.join('.').toLowerCase();
    queries.push(`${name} ${type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : type}`);
    const answer = names[name];
    if (answer === 'hang') return;
    const records = (answer ?? [])
      .map((address) => ipaddr.parse(address))
      .filter((address) => (type === TYPE_A ? address.kind() === 'ipv4' : type === TYPE_AAAA && address.kind() === 'ipv6'))
      .map((address) => {
        const data = Buffer.from(address.toByteArray());
        const record = Buffer.alloc(12);
        record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
        record.writeUInt16BE(type, 2);
        record.writeUInt16BE(1, 4); // class IN
        record.writeUInt32BE(60, 6); // TTL
        record.writeUInt16BE(data.length, 10);
        return Buffer.concat([record, data]);
      });
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the query's id
    const recursionDesired = query[2] & 0x01;
    header[2] = 0x84 | recursionDesired; // a response, authoritative
    header[3] = 0x80 | (answer === undefined ? 3 : 0); // recursion available; NXDOMAIN for an unknown name
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...records]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

// Counts round trips to a real PostgreSQL: a TCP relay on loopback between Flowport and the server
// that counts the server's ReadyForQuery messages ('Z'). PostgreSQL sends exactly one at the end of
// every simple query and every extended-protocol Sync, so each 'Z' is one wait on the server;
// nothing is changed on the way. Connection start-up ends with one too: count after warming the pool.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface RoundTripCounter {
  /** The database URL through the relay (same database, user and options). */
  url: string;
  /** ReadyForQuery messages the server has sent so far, over every connection. */
  count(): number;
  /** Connections opened through the relay so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Reads the server → client stream message by message (type byte, int32 length including itself). */
function countReady(onReady: () => void) {
  let buf: Buffer = Buffer.alloc(0);
  return (chunk: Buffer) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    let at = 0;
    while (buf.length - at >= 5) {
      const len = buf.readUInt32BE(at + 1);
      if (buf.length - at < 1 + len) break;
      if (buf[at] === 0x5a /* 'Z' */) onReady();
      at += 1 + len;
    }
    buf = buf.subarray(at);
  };
}

/** Starts a relay to the server of `databaseUrl` (no TLS: the test database is on loopback). */
export async function countRoundTrips(databaseUrl: string): Promise<RoundTripCounter> {
  const target = new URL(databaseUrl);
  let ready = 0;
  let opened = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    opened++;
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 5432) });
    sockets.add(client).add(upstream);
    const count = countReady(() => ready++);
    upstream.on('data', (chunk: Buffer) => {
      count(chunk);
      client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    count: () => ready,
    connections: () => opened,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// Whether a request was made on this machine, directly, to this server: for what only the machine
// running Flowport may read (GET /metrics without a token). All of these must hold:
// - the peer is a loopback address;
// - the Host header names a loopback host with the port the request arrived on (a DNS-rebinding
//   page reaches loopback under its own host name, so it fails here);
// - no proxy or tunnel header (Forwarded, X-Forwarded-*, Via, X-Real-IP, …): a local reverse proxy
//   or tunnel forwards requests from elsewhere over loopback;
// - no Origin, or a loopback origin on the same port (a browser page from elsewhere sends its own).
// Shared guard candidate: the sandbox stand-in (api/src/sandbox/app.ts isLocalRequest) checks a
// subset of this; the coordinator may unify the two here.
import type { IncomingMessage } from 'node:http';

const LOOPBACK_PEER = /^(?:127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const PROXY_HEADERS = ['forwarded', 'via', 'x-real-ip', 'cf-connecting-ip', 'true-client-ip', 'x-client-ip'];

function loopbackHostPort(value: string, port: number): boolean {
  const v = value.trim().toLowerCase();
  const i = v.lastIndexOf(':');
  // No port (`localhost`, `[::1]`): the default port, 80.
  if (i <= 0 || v.endsWith(']')) return port === 80 && LOOPBACK_HOSTS.has(v);
  const host = v.slice(0, i);
  return LOOPBACK_HOSTS.has(host) && v.slice(i + 1) === String(port);
}

export type LoopbackVerdict = { ok: true } | { ok: false; why: string };

export function loopbackVerdict(incoming: IncomingMessage | undefined, headers: Headers): LoopbackVerdict {
  const socket = incoming?.socket;
  if (!socket || !LOOPBACK_PEER.test(socket.remoteAddress ?? '')) return { ok: false, why: 'the peer is not loopback' };
  const port = socket.localPort ?? 0;
  const host = headers.get('host');
  if (!host || !loopbackHostPort(host, port))
    return { ok: false, why: `the Host header is not a loopback name with port ${port}` };
  for (const [name] of headers) {
    if (name.startsWith('x-forwarded-') || PROXY_HEADERS.includes(name))
      return { ok: false, why: `the request carries a proxy header (${name})` };
  }
  const origin = headers.get('origin');
  if (origin !== null) {
    let ok = false;
    try {
      const u = new URL(origin);
      ok = u.protocol === 'http:' && loopbackHostPort(u.host, port);
    } catch {
      ok = false;
    }
    if (!ok) return { ok: false, why: 'the Origin is not this server on loopback' };
  }
  return { ok: true };
}

export function isLoopbackRequest(incoming: IncomingMessage | undefined, headers: Headers): boolean {
  return loopbackVerdict(incoming, headers).ok;
}

// The one guard of every loopback-only route (the sandbox's Shopify stand-in: its record holds
// every payload handed to Flow and its fault switches can stop every delivery). A request is
// served only when all of these hold:
//   - the peer is a loopback address;
//   - no proxy or tunnel header: any `Forwarded`, `Via` or `X-Forwarded-*` (and the client-IP
//     headers CDNs add) means the request was relayed (nginx `proxy_pass`, `ssh -R`, socat,
//     ngrok), whoever the peer is;
//   - `Host` names this machine by a loopback name with the server's own port (`localhost`,
//     `127.0.0.1`, `[::1]`): a DNS-rebound name (`Host: evil.example`) is refused;
//   - an `Origin`, when sent, is a loopback origin with the server's port (a page elsewhere,
//     or `null`, is refused), and a browser's `Sec-Fetch-Site` says same-origin or none;
//   - a POST, PUT or PATCH is `application/json` (a cross-site form or `text/plain` POST needs
//     no preflight; JSON does). A route that is a page's own form (the sandbox's authorize page)
//     passes `{ forms: true }` and also takes `application/x-www-form-urlencoded`: a browser
//     sends `Origin` with every cross-origin form POST, and the check above refuses it, so a
//     page elsewhere still cannot submit the form.
import type { IncomingMessage } from 'node:http';

export type LoopbackRefusal = 'peer' | 'proxied' | 'host' | 'origin' | 'media';

const LOOPBACK_PEER = /^(?:127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Client-address headers relays add besides Forwarded, Via and X-Forwarded-*. */
const RELAY_HEADERS = new Set([
  'forwarded',
  'via',
  'x-real-ip',
  'x-client-ip',
  'x-cluster-client-ip',
  'cf-connecting-ip',
  'true-client-ip',
  'fastly-client-ip',
  'x-original-forwarded-for',
  'forwarded-for',
]);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** `host[:port]` → [lower-cased host, port or null]; null when it is not that shape. */
function splitHost(value: string): [string, number | null] | null {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(value.trim());
  if (!m) return null;
  return [(m[1] as string).toLowerCase(), m[2] === undefined ? null : Number(m[2])];
}

function isLoopbackAuthority(value: string, port: number, defaultPort: number): boolean {
  const parts = splitHost(value);
  if (!parts) return false;
  const [host, p] = parts;
  return LOOPBACK_NAMES.has(host) && (p ?? defaultPort) === port;
}

/** Why a request may not be served by a loopback-only route, or null when it may. */
export function loopbackRefusal(
  incoming: IncomingMessage | undefined,
  headers: Headers,
  method: string,
  options: { forms?: boolean } = {},
): { reason: LoopbackRefusal; detail: string } | null {
  const socket = incoming?.socket;
  if (!socket || !LOOPBACK_PEER.test(socket.remoteAddress ?? '')) {
    return { reason: 'peer', detail: 'It answers only connections from this machine (a loopback peer).' };
  }
  for (const name of headers.keys()) {
    if (RELAY_HEADERS.has(name) || name.startsWith('x-forwarded-')) {
      return {
        reason: 'proxied',
        detail: `It is not served through a proxy or tunnel (the request carries \`${name}\`).`,
      };
    }
  }
  const port = socket.localPort ?? 0;
  const host = headers.get('host') ?? '';
  if (!isLoopbackAuthority(host, port, 80)) {
    return {
      reason: 'host',
      detail: `It answers only requests addressed to localhost, 127.0.0.1 or [::1] on port ${port} (Host was ${host ? `\`${host.slice(0, 100)}\`` : 'missing'}).`,
    };
  }
  const origin = headers.get('origin');
  if (origin !== null) {
    let ok = false;
    try {
      const u = new URL(origin);
      ok = u.protocol === 'http:' && u.origin === origin && isLoopbackAuthority(u.host, port, 80);
    } catch {
      ok = false;
    }
    if (!ok) {
      return {
        reason: 'origin',
        detail: `It refuses requests from web pages of another origin (Origin \`${origin.slice(0, 100)}\`).`,
      };
    }
  }
  const site = headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin' && site !== 'none') {
    return {
      reason: 'origin',
      detail: `It refuses requests a browser marks as \`Sec-Fetch-Site: ${site.slice(0, 40)}\`.`,
    };
  }
  if (BODY_METHODS.has(method.toUpperCase())) {
    const media = (headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    const pageForm = options.forms === true && media === 'application/x-www-form-urlencoded';
    if (media !== 'application/json' && !pageForm) {
      return {
        reason: 'media',
        detail: `Its ${method.toUpperCase()} requests take \`Content-Type: application/json\` (got ${media ? `\`${media.slice(0, 80)}\`` : 'none'}).`,
      };
    }
  }
  return null;
}

// One round of intake load in its own process (bench:handoff --under-load): signed ~1 KiB events
// through autocannon, closed loop (capacity) or at a fixed overall rate, so the load generator's
// CPU stays out of the event loop that times the handoff. Argument: JSON { url, secret, header,
// connections, seconds, rate? }; prints JSON { rps, ok, non2xx, errors, p99 }.
import type { SandboxCredentials } from '../../api/src/sandbox/bootstrap.ts';
import { autocannon, signedRequests } from './intake-load.ts';

const o = JSON.parse(process.argv[2] ?? '{}') as {
  url: string;
  secret: string;
  header: string;
  connections: number;
  seconds: number;
  rate?: number;
};
const creds = { signing_secret: o.secret, signature_header: o.header } as SandboxCredentials;
const r = await autocannon({
  url: o.url,
  method: 'POST',
  connections: o.connections,
  duration: o.seconds,
  headers: { 'content-type': 'application/json' },
  requests: signedRequests(creds),
  timeout: 30,
  ...(o.rate ? { overallRate: Math.max(1, Math.round(o.rate)) } : {}),
});
console.log(
  JSON.stringify({ rps: r.requests.average, ok: r['2xx'], non2xx: r.non2xx, errors: r.errors, p99: r.latency.p99 }),
);

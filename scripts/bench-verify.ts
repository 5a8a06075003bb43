// `npm run bench:verify`: what sender authentication costs per request, in this process, for
// every auth mode: `verifyRequest` on a signed ~1 KiB body with the endpoint's secrets prepared
// as intake caches them (verifySecret, whose HmacKey keeps the pads). The baseline, measured in
// the same run, is Node's own `createHmac('sha256', <string key>).update(body).digest()`, the way
// most webhook libraries verify: a ratio under 1 means intake verifies for less than that one call
// (see HmacKey in verify.ts), and a mode far above 1 does avoidable work per request.
import { createHmac, randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { HeaderReader } from '../api/src/intake/intake.ts';
import { PRESET_HMAC, standardWebhooksKey, verifyRequest, verifySecret } from '../api/src/intake/verify.ts';
import type { AuthMode } from '../api/src/store/tables/endpoints.ts';
import { DEFAULT_HMAC, type EndpointConfig } from '../api/src/services/endpoints.ts';
import { median } from './lib/intake-load.ts';
import { loadLine } from './lib/proc-cpu.ts';

const ITERATIONS = Number(process.env.BENCH_VERIFY_ITERATIONS ?? 50_000);
const ROUNDS = Math.max(5, Number(process.env.BENCH_ROUNDS ?? 5));
const body = Buffer.from(JSON.stringify({ id: randomUUID(), data: { note: 'x'.repeat(940) } }));
const nowMs = Date.now();
const ts = Math.floor(nowMs / 1000);
const secret = 'fpsec_bench_only_not_a_real_secret_0000';
const swSecret = `whsec_${Buffer.from('bench-only-standard-webhooks-key!').toString('base64')}`;

const sig = (key: string | Buffer, content: string | Buffer, encoding: 'hex' | 'base64') =>
  createHmac('sha256', key).update(content).digest(encoding);
const withBody = (prefix: string) => Buffer.concat([Buffer.from(prefix), body]);

/** Signed headers for each mode, as its sender sends them. */
const CASES: { mode: AuthMode; secret: string; headers: Record<string, string> }[] = [
  {
    mode: 'hmac_sha256',
    secret,
    headers: { [DEFAULT_HMAC.header]: `${DEFAULT_HMAC.prefix}${sig(secret, body, DEFAULT_HMAC.encoding)}` },
  },
  { mode: 'github', secret, headers: { [PRESET_HMAC.github.header]: `sha256=${sig(secret, body, 'hex')}` } },
  { mode: 'shopify', secret, headers: { [PRESET_HMAC.shopify.header]: sig(secret, body, 'base64') } },
  { mode: 'stripe', secret, headers: { 'stripe-signature': `t=${ts},v1=${sig(secret, withBody(`${ts}.`), 'hex')}` } },
  {
    mode: 'standard_webhooks',
    secret: swSecret,
    headers: {
      'webhook-id': 'msg_bench',
      'webhook-timestamp': String(ts),
      'webhook-signature': `v1,${sig(standardWebhooksKey(swSecret), withBody(`msg_bench.${ts}.`), 'base64')}`,
    },
  },
  {
    mode: 'slack',
    secret,
    headers: {
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': `v0=${sig(secret, withBody(`v0:${ts}:`), 'hex')}`,
    },
  },
];

function reader(headers: Record<string, string>): HeaderReader {
  return { get: (n) => headers[n] ?? null, has: (n) => n in headers };
}

/** µs per call of one round. */
function round(fn: () => void): number {
  const t = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) fn();
  return Number(process.hrtime.bigint() - t) / ITERATIONS / 1000;
}

/** Medians of ROUNDS rounds of `a` and `b`, alternating (a, b, b, a, …) so drift hits both. */
function alternate(a: () => void, b: () => void): { a: number; b: number; ratio: number } {
  const as: number[] = [];
  const bs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      as.push(round(a));
      bs.push(round(b));
    } else {
      bs.push(round(b));
      as.push(round(a));
    }
  }
  return { a: median(as), b: median(bs), ratio: median(bs.map((x, i) => x / (as[i] as number))) };
}

console.log(`bench:verify — ${loadLine(availableParallelism())} at start.`);
const bufferKey = Buffer.from(secret);
for (const c of CASES) {
  const config = { authMode: c.mode } as EndpointConfig;
  const secrets = [verifySecret(c.mode, c.secret)];
  const req = { headers: reader(c.headers), raw: body, now: nowMs };
  verifyRequest(config, secrets, req); // throws if the signature above is wrong
  // Alternate the baseline with each mode, round by round, so drift hits both.
  const m = alternate(
    () => createHmac('sha256', secret).update(body).digest(),
    () => verifyRequest(config, secrets, req),
  );
  console.log(
    `${c.mode.padEnd(18)} ${m.b.toFixed(2).padStart(6)} µs per verification   baseline ${m.a.toFixed(2)} µs   ratio ${m.ratio.toFixed(2)}`,
  );
}
const buffer = alternate(
  () => createHmac('sha256', secret).update(body).digest(),
  () => createHmac('sha256', bufferKey).update(body).digest(),
);
console.log(
  `\nFor comparison, one HMAC with a Buffer key: ${buffer.b.toFixed(2)} µs (${buffer.ratio.toFixed(1)}x the string-key baseline of ${buffer.a.toFixed(2)} µs).`,
);
console.log(
  `Body ${body.length} bytes, ${ITERATIONS} verifications per round; medians of ${ROUNDS} rounds per side, alternating with the baseline.`,
);

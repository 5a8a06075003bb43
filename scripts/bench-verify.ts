// `npm run bench:verify`: what sender authentication costs per request, in this process, for
// every auth mode: `verifyRequest` on a signed ~1 KiB body with the endpoint's secrets prepared
// as intake caches them (verifySecret, whose HmacKey keeps the pads). The baseline, measured in
// the same run, is Node's own `createHmac('sha256', <string key>).update(body).digest()`, the way
// most webhook libraries verify: a ratio under 1 means intake verifies for less than that one call
// (see HmacKey in verify.ts), and a mode far above 1 does avoidable work per request.
import { createHmac, randomUUID } from 'node:crypto';
import type { HeaderReader } from '../api/src/intake/intake.ts';
import { PRESET_HMAC, standardWebhooksKey, verifyRequest, verifySecret } from '../api/src/intake/verify.ts';
import type { AuthMode } from '../api/src/services/endpoints.ts';
import { DEFAULT_HMAC, type EndpointConfig } from '../api/src/services/endpoints.ts';

const ITERATIONS = Number(process.env.BENCH_VERIFY_ITERATIONS ?? 50_000);
const ROUNDS = 3;
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

/** Median µs per call over ROUNDS rounds. */
function measure(fn: () => void): number {
  const per: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < ITERATIONS; i++) fn();
    per.push(Number(process.hrtime.bigint() - t) / ITERATIONS / 1000);
  }
  return per.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)] as number;
}

const bufferKey = Buffer.from(secret);
for (const c of CASES) {
  const config = { authMode: c.mode } as EndpointConfig;
  const secrets = [verifySecret(c.mode, c.secret)];
  const req = { headers: reader(c.headers), raw: body, now: nowMs };
  verifyRequest(config, secrets, req); // throws if the signature above is wrong
  // Interleave the baseline with each mode so drift hits both.
  const base = measure(() => createHmac('sha256', secret).update(body).digest());
  const mode = measure(() => verifyRequest(config, secrets, req));
  console.log(
    `${c.mode.padEnd(18)} ${mode.toFixed(2).padStart(6)} µs per verification   baseline ${base.toFixed(2)} µs   ratio ${(mode / base).toFixed(2)}`,
  );
}
const buffer = measure(() => createHmac('sha256', bufferKey).update(body).digest());
const base = measure(() => createHmac('sha256', secret).update(body).digest());
console.log(
  `\nFor comparison, one HMAC with a Buffer key: ${buffer.toFixed(2)} µs (${(buffer / base).toFixed(1)}x the string-key baseline of ${base.toFixed(2)} µs).`,
);
console.log(`Body ${body.length} bytes, ${ITERATIONS} verifications per round, median of ${ROUNDS} rounds.`);

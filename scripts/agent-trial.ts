// Sets up the merchant problems an agent trial starts from (issue 42: "try it as an agent would"), on
// a fresh sandbox Flowport, then leaves it running for the agents and prints what to give them: the
// base URL and an agent grant, nothing else.
//
//   node scripts/agent-trial.ts [--port 31870] [--dir /tmp/flowport-trial]
//
// Three problems, each in plain words in the printout:
//   workflow-off  the ERP's order events sent while the workflow was off (no_workflow), then turned on;
//   refused-3pl   a 3PL that signs the body only, where the endpoint expects `{timestamp}.{body}`;
//   order-twice   order 2002 sent twice by the ERP (the second a duplicate) and delivered once.
// Stop it with Ctrl-C; the data directory is left for inspection.
import { spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '31870' }, dir: { type: 'string', default: '/tmp/flowport-trial' } },
});
const port = Number(values.port);
const dir = values.dir as string;
const base = `http://localhost:${port}`;
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const env = { ...process.env, PORT: String(port), FLOWPORT_DATA_DIR: dir, FLOWPORT_LOG_LEVEL: 'warn' };

const server = spawn(process.execPath, ['scripts/start-entry.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
process.on('SIGINT', () => {
  server.kill('SIGTERM');
  process.exit(0);
});

function cli(args: string[], extraEnv: Record<string, string> = {}): string {
  const r = spawnSync(process.execPath, ['bin/flowport.js', ...args], {
    env: { ...env, ...extraEnv, FLOWPORT_BASE_URL: base },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`flowport ${args.join(' ')}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

async function ready(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('Flowport did not become ready');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function post(url: string, body: string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return `${res.status} ${(await res.text()).slice(0, 80)}`;
}

function createEndpoint(args: string[], secret: string): { id: string; ingest: string } {
  const out = cli(['endpoints', 'create', '--json', ...args], { TRIAL_SECRET: secret });
  const parsed = JSON.parse(out) as { id?: string; endpoint_id?: string; ingest_url: string };
  return { id: (parsed.id ?? parsed.endpoint_id) as string, ingest: parsed.ingest_url };
}

await ready();
const creds = JSON.parse(readFileSync(join(dir, 'sandbox-credentials.json'), 'utf8')) as {
  shop_id: string;
  shop_domain: string;
};
const hmacHex = (secret: string, content: string) => createHmac('sha256', secret).update(content).digest('hex');

// The ERP: order events, the Shopify order id at `order.id`, deduped on the ERP's event id.
const erpSecret = 'trial_erp_signing_secret_0123456789abcdef';
const erp = createEndpoint(
  [
    ...['--shop', creds.shop_id, '--name', 'Acme ERP', '--auth-mode', 'hmac_sha256'],
    ...['--trigger-variant', 'external_order_event', '--sender-label', 'Acme ERP'],
    ...['--resource-id-path', 'order.id', '--external-id-path', 'event_id', '--secret-env', 'TRIAL_SECRET'],
  ],
  erpSecret,
);
const sendErp = (eventId: string, orderId: number, type = 'order.shipped') => {
  const body = JSON.stringify({ event_id: eventId, type, order: { id: orderId, name: `#${orderId}` } });
  return post(erp.ingest, body, { 'x-flowport-signature': `sha256=${hmacHex(erpSecret, body)}` });
};
const orderTrigger = 'external-order-event';
const shopArgs = ['--shop', creds.shop_domain, '--trigger', orderTrigger];

// The workflow is on; an order before the outage is delivered.
cli(['sandbox', 'workflows', 'enable', ...shopArgs]);
await sleep(500);
console.error('erp 2001:', await sendErp('erp_evt_2001', 2001));
// Order 2002, sent twice by the ERP's retry (the same event id): one delivery, one suppressed duplicate.
console.error('erp 2002:', await sendErp('erp_evt_2002', 2002));
await sleep(1500);
console.error('erp 2002 again:', await sendErp('erp_evt_2002', 2002));
await sleep(1000);

// The outage: the workflow is turned off, five orders arrive, it is turned back on.
cli(['sandbox', 'workflows', 'disable', ...shopArgs]);
await sleep(500);
for (const n of [2101, 2102, 2103, 2104, 2105]) console.error(`erp ${n}:`, await sendErp(`erp_evt_${n}`, n));
await sleep(2000);
cli(['sandbox', 'workflows', 'enable', ...shopArgs]);
await sleep(500);
console.error('erp 2106:', await sendErp('erp_evt_2106', 2106));

// The 3PL: the endpoint expects `{timestamp}.{body}` signed; the 3PL signs the body only.
const tplSecret = 'trial_3pl_signing_secret_abcdef0123456789';
const tpl = createEndpoint(
  [
    ...['--shop', creds.shop_id, '--name', 'ShipFast 3PL', '--auth-mode', 'hmac_sha256'],
    ...['--trigger-variant', 'external_event', '--sender-label', 'ShipFast'],
    ...['--signature-header', 'x-shipfast-signature', '--signature-prefix', '', '--timestamp-header'],
    ...['x-shipfast-timestamp', '--secret-env', 'TRIAL_SECRET'],
  ],
  tplSecret,
);
for (let i = 1; i <= 5; i++) {
  const body = JSON.stringify({ id: `sf_${i}`, type: 'shipment.created', tracking: `1Z${i}` });
  const ts = String(Math.floor(Date.now() / 1000));
  console.error(
    `3pl ${i}:`,
    await post(tpl.ingest, body, { 'x-shipfast-signature': hmacHex(tplSecret, body), 'x-shipfast-timestamp': ts }),
  );
}
await sleep(1500);

const grant = JSON.parse(
  cli([
    ...['grants', 'create', '--json', '--shop', creds.shop_id, '--tier', 'admin_assistant'],
    ...['--actor-kind', 'agent', '--actor-name', 'trial agent', '--expires-in', '1d'],
  ]),
) as { token: string };

console.log(`Base URL: ${base}
Grant (Bearer token): ${grant.token}

Problems, in the merchant's words:
1. "I switched off my Flow workflow for the ERP's order events by mistake for a while today, then turned
   it back on. The orders that came in while it was off never got their Flow actions. Please get each of
   them through, once."
2. "ShipFast, our 3PL, says every webhook they send us is refused. What is wrong, and what exactly do they
   need to change?"
3. "A customer says they got two shipping emails for order 2002. Did Flowport hand that order to Flow
   twice?"
(Ctrl-C to stop; data in ${dir})`);

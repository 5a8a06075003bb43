// The thinnest vertical slice, end to end: a signed POST is stored and answered
// 202, the in-process worker hands it to the sandbox's flowTriggerReceive, and the
// event becomes delivered — visible in the sandbox's record and in the store.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function waitFor<T>(fn: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('the banner curl (signed POST) → 202 → delivered to the sandbox', async () => {
  const creds = server.sandbox!;
  const sig = /(x-flowport-signature: [^']+)/.exec(creds.curl)?.[1]?.split(': ')[1];
  expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
  const res = await fetch(creds.ingest_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [creds.signature_header]: sig! },
    body: creds.example_body,
  });
  expect(res.status).toBe(202);
  const ack = (await res.json()) as any;
  expect(ack.event_id).toMatch(/^evt_/);
  expect(ack.receipt_id).toMatch(/^rcpt_/);

  const trigger = await waitFor(async () => {
    const r = await fetch(`${server.url}/sandbox/shopify/triggers?shop=${creds.shop_domain}`);
    const { triggers } = (await r.json()) as { triggers: { payload: Record<string, unknown> }[] };
    return triggers.find(
      (t) => JSON.stringify(t.payload).includes(ack.event_id) || JSON.stringify(t.payload).includes('demo_1001'),
    );
  });
  expect(trigger).toBeDefined();

  const row = await waitFor(async () => {
    const r = await server.runtime.services.db.get<{ state: string }>('SELECT state FROM events WHERE id = ?', [
      ack.event_id,
    ]);
    return r?.state === 'delivered' ? r : undefined;
  });
  expect(row.state).toBe('delivered');
});

it('a forged signature is refused and nothing reaches Flow', async () => {
  const creds = server.sandbox!;
  const before = await server.runtime.services.db.get<{ n: number }>(
    'SELECT COUNT(*) AS n FROM events WHERE state != ?',
    ['rejected'],
  );
  const res = await fetch(creds.ingest_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [creds.signature_header]: `sha256=${'0'.repeat(64)}` },
    body: creds.example_body,
  });
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  const after = await server.runtime.services.db.get<{ n: number }>(
    'SELECT COUNT(*) AS n FROM events WHERE state != ?',
    ['rejected'],
  );
  expect(after?.n).toBe(before?.n);
});

it('the banner curl pasted twice: the second answer is duplicate_suppressed, naming the first event', async () => {
  const creds = server.sandbox!;
  const sig = /(x-flowport-signature: [^']+)/.exec(creds.curl)?.[1]?.split(': ')[1] as string;
  const send = () =>
    fetch(creds.ingest_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [creds.signature_header]: sig },
      body: creds.example_body,
    });
  // The first test may already have sent it: either way the next one is a duplicate of the first.
  const first = await send();
  const firstAck = (await first.json()) as { status?: string; event_id: string; duplicate_of?: string };
  const original = first.status === 202 ? firstAck.event_id : (firstAck.duplicate_of as string);
  expect(original).toMatch(/^evt_/);
  const second = await send();
  expect(second.status).toBe(200);
  const ack = (await second.json()) as { status: string; duplicate_of: string };
  expect(ack.status).toBe('duplicate_suppressed');
  expect(ack.duplicate_of).toBe(original);
});

// Issue 42 item 10: setup checks carry a severity. A failing check (events will not reach Flow
// until it is fixed) is `blocking`; a warning (works, needs attention) is `advisory`; `missing`
// says which is which, blocking first, so a frozen store is never read as one more harmless
// warning. Diagnostics shows the same checks. Real HTTP, both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api } from '../intents/helpers.ts';

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  token = server.sandbox?.grant_token as string;
});
afterAll(async () => {
  await server?.close();
});

describe('setup severity', () => {
  it('a frozen store (fail) is blocking, no recent events (warn) advisory; missing lists blocking first', async () => {
    const sb = server.sandbox as NonNullable<TestServer['sandbox']>;
    await server.runtime.services.db.run("UPDATE shops SET connection_status = 'frozen' WHERE id = ?", [sb.shop_id]);
    const setup = await api(server, token, 'GET', '/agent/v1/setup');
    expect(setup.status, setup.text).toBe(200);
    const checks = setup.json.checks as { check: string; status: string; severity: string | null }[];
    for (const c of checks)
      expect(c.severity, c.check).toBe(c.status === 'fail' ? 'blocking' : c.status === 'warn' ? 'advisory' : null);
    const missing = setup.json.missing as { item: string; severity: string }[];
    expect(missing[0]).toMatchObject({ item: 'shop_connected', severity: 'blocking' });
    expect(missing.find((m) => m.item === 'recent_deliveries')).toMatchObject({ severity: 'advisory' });
    const order = missing.map((m) => m.severity);
    expect(order.lastIndexOf('blocking')).toBeLessThan(order.indexOf('advisory'));
    expect(setup.json.ready).toBe(false);
    const diag = await api(server, token, 'GET', '/agent/v1/diagnostics');
    expect(diag.status, diag.text).toBe(200);
    const connected = (diag.json.checks ?? diag.json.readiness).find(
      (c: { check: string }) => c.check === 'shop_connected',
    );
    expect(connected.severity).toBe('blocking');
  });
});

// Issue 45 (ADR 0602): how many round trips to PostgreSQL each kind of agent read makes, counted on
// the wire between Flowport and a real PostgreSQL (tests/helpers/pg-round-trips.ts), over real HTTP.
// Every round trip is a wait on another process; on a busy machine each one can wait for a core.
// The figures are today's: a change that adds one to a read fails here and says which.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../../api/src/sandbox/bootstrap.ts';
import { flushUsage } from '../../api/src/usage/ledger.ts';
import { countRoundTrips, type RoundTripCounter } from '../helpers/pg-round-trips.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { createPgSchema, type PgSchema, testStore } from '../helpers/store.ts';
import { sendSigned } from '../intents/helpers.ts';

describe.runIf(testStore() === 'postgres')('round trips to PostgreSQL per agent read', () => {
  let schema: PgSchema;
  let relay: RoundTripCounter;
  let server: TestServer;
  let creds: SandboxCredentials;
  let eventId: string;

  beforeAll(async () => {
    schema = await createPgSchema('rt');
    relay = await countRoundTrips(schema.url);
    server = await startTestServer({ env: { FLOWPORT_DATABASE_URL: relay.url }, worker: false });
    creds = server.sandbox as SandboxCredentials;
    const sent = await sendSigned(server, creds.endpoint_id, creds.signing_secret, {
      type: 'order.created',
      id: 'rt-1',
    });
    expect(sent.status).toBe(202);
    eventId = sent.json.event_id as string;
  });
  afterAll(async () => {
    await server?.close();
    await relay?.close();
    await schema?.drop();
  });

  const get = async (path: string) => {
    const res = await fetch(`${server.url}/agent/v1${path}`, {
      headers: { authorization: `Bearer ${creds.grant_token}` },
    });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    await res.arrayBuffer();
  };

  /**
   * The round trips one request of `path` makes: the fewest over a few requests, since the usage
   * ledger's flush (every second) shares the pool and may land inside one of them.
   */
  const roundTrips = async (path: string) => {
    await get(path); // warm: the rate windows and meters are read from the store once
    const counts: number[] = [];
    for (let i = 0; i < 5; i++) {
      const before = relay.count();
      const opened = relay.connections();
      await get(path);
      // A connection opened meanwhile ends its start-up with a ReadyForQuery of its own.
      counts.push(relay.count() - before - (relay.connections() - opened));
    }
    return Math.min(...counts);
  };

  it('counts what it relays: one plain query is one round trip', async () => {
    const db = server.runtime.services.db;
    await db.get('SELECT 1 AS one');
    await flushUsage(db);
    const before = relay.count();
    const opened = relay.connections();
    await db.get('SELECT 1 AS one');
    expect(relay.count() - before - (relay.connections() - opened)).toBe(1);
  });

  it('each read kind makes the round trips it is known to make', async () => {
    await flushUsage(server.runtime.services.db);
    const found: Record<string, number> = {};
    const expected: Record<string, number> = {
      // Authentication (the grant, with its shop's plan and limits) is the first of each; the
      // limits are not read again (ADR 0602).
      '/grant': 3, // + at once: the grant's row with its shop's domain, this minute's stored count
      '/plan-usage': 5, // + at once: the meters, the period's event counts, the two rate windows
      // + at once: the shop, its endpoints, the newest times, the refusals (receipts and tallies,
      // read once for the check and the window), then the checks' own: live endpoints, Flow's
      // signals (after the shop's domain), the window's outcomes, the meters
      '/setup': 10,
      '/events?limit=50': 3, // + at once: the shop's facts, the page with its per-row facts
      [`/events/${eventId}`]: 11,
    };
    for (const path of Object.keys(expected)) found[path] = await roundTrips(path);
    expect(found).toEqual(expected);
  });

  it('a read takes its limits from authentication: a change to them shows on the next read', async () => {
    const db = server.runtime.services.db;
    await db.run('UPDATE shops SET limits_json = ? WHERE id = ?', [
      JSON.stringify({ ratePerMinute: { perGrant: 517, perShop: 100_000 } }),
      creds.shop_id,
    ]);
    try {
      const res = await fetch(`${server.url}/agent/v1/grant`, {
        headers: { authorization: `Bearer ${creds.grant_token}` },
      });
      const body = (await res.json()) as { usage: { rate_limit_per_minute: number } };
      expect(body.usage.rate_limit_per_minute).toBe(517);
    } finally {
      await db.run('UPDATE shops SET limits_json = NULL WHERE id = ?', [creds.shop_id]);
    }
  });
});

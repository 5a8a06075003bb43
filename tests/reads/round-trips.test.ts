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
      // Authentication (the grant, with its shop's plan, limits, connection and replays used) is
      // the first of each; none of that is read again (ADR 0602).
      '/grant': 3, // + at once: the grant's row with its shop's domain, this minute's stored count
      '/plan-usage': 5, // + at once: the meters, the period's event counts, the two rate windows
      // + at once: the shop, its endpoints, the newest times, the refusals (receipts and tallies,
      // read once for the check and the window), then the checks' own: live endpoints, Flow's
      // signals (after the shop's domain), the window's outcomes, the meters
      '/setup': 10,
      // + the page with its per-row facts (the shop's facts came with authentication)
      '/events?limit=50': 2,
      // + the event, then at once: the recent-delivery check (its family, its duplicates and their
      // count), attempts, replays, endpoint, shop, the sender event's facts, then Flow's signal
      [`/events/${eventId}`]: 10,
    };
    for (const path of Object.keys(expected)) found[path] = await roundTrips(path);
    expect(found).toEqual(expected);
  });
});

// The shop's limits and facts a read shows come with its authentication (ADR 0602): read in the
// same request, never kept between requests, so a change shows on the next read. Both stores.
describe("a read's shop facts are its own request's", () => {
  let server: TestServer;
  let creds: SandboxCredentials;
  let eventId: string;

  beforeAll(async () => {
    server = await startTestServer({ worker: false });
    creds = server.sandbox as SandboxCredentials;
    const sent = await sendSigned(server, creds.endpoint_id, creds.signing_secret, {
      type: 'order.created',
      id: 'f-1',
    });
    expect(sent.status).toBe(202);
    eventId = sent.json.event_id as string;
  });
  afterAll(async () => {
    await server?.close();
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

  it("an event read takes the shop's connection from authentication: a change shows on the next read", async () => {
    const db = server.runtime.services.db;
    // A failed event is replayable while the shop is connected.
    await db.run("UPDATE events SET state = 'failed' WHERE id = ?", [eventId]);
    const replay = async () => {
      const res = await fetch(`${server.url}/agent/v1/events?limit=50`, {
        headers: { authorization: `Bearer ${creds.grant_token}` },
      });
      const body = (await res.json()) as { data: { id: string; replay: { available: boolean; reason: string } }[] };
      return body.data.find((e) => e.id === eventId)?.replay;
    };
    try {
      expect((await replay())?.available).toBe(true);
      await db.run("UPDATE shops SET connection_status = 'disconnected' WHERE id = ?", [creds.shop_id]);
      const refused = await replay();
      expect(refused?.available).toBe(false);
      expect(refused?.reason).toMatch(/disconnect/i);
    } finally {
      await db.run("UPDATE shops SET connection_status = 'connected' WHERE id = ?", [creds.shop_id]);
    }
    expect((await replay())?.available).toBe(true);
  });
});

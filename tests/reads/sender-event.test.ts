// Issue 42: "prove an order was handed to Flow once" from one read. An event's detail says what
// happened to its sender event as a whole: how many times Flow accepted it (the original and every
// replay), which copies intake suppressed as duplicates, and how many calls had an unknown outcome;
// a suppressed copy's detail tells the same story as its original's. Real HTTP, both stores.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, sendSigned, waitDelivered } from '../intents/helpers.ts';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer();
  token = server.sandbox?.grant_token as string;
});
afterAll(async () => {
  await server?.close();
});

const detail = async (id: string) => {
  const r = await api(server, token, 'GET', `/agent/v1/events/${id}`);
  expect(r.status, r.text).toBe(200);
  return r.json;
};

describe('an event read says what happened to its sender event as a whole', () => {
  it('counts Flow deliveries over the replay family and names the suppressed duplicates', async () => {
    const creds = server.sandbox!;
    const body = { type: 'order.shipped', id: `ship_${randomUUID()}`, order_id: 2002 };
    const first = await sendSigned(server, creds.endpoint_id, creds.signing_secret, body);
    expect(first.status).toBe(202);
    const original = first.json.event_id as string;
    await waitDelivered(server, original);
    const again = await sendSigned(server, creds.endpoint_id, creds.signing_secret, body);
    expect(again.json.status).toBe('duplicate_suppressed');
    const copy = again.json.event_id as string;
    const copyRead = await api(
      server,
      token,
      'GET',
      `/agent/v1/events?external_event_id=${body.id}&state=duplicate_suppressed`,
    );
    const copyId = (copyRead.json.data as { id: string }[])[0]?.id ?? copy;

    const once = (await detail(original)).handoff.sender_event;
    expect(once).toMatchObject({
      original_id: original,
      flow_deliveries: 1,
      delivered_event_ids: [original],
      possible_duplicate_deliveries: 0,
      suppressed_duplicates: { count: 1, event_ids: [copyId] },
    });
    expect(once.summary).toMatch(/accepted this sender event 1 time/);
    // The suppressed copy tells the same story.
    expect((await detail(copyId)).handoff.sender_event).toEqual(once);

    // A replay that reaches Flow is a second delivery of the same sender event, on every member's read.
    const preview = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(preview.status, preview.text).toBe(201);
    const done = await confirm(server, token, preview.json.id);
    expect(done.status, done.text).toBe(200);
    const replay = done.json.result.event_id as string;
    await waitDelivered(server, replay);
    for (const id of [original, copyId, replay]) {
      const facts = (await detail(id)).handoff.sender_event;
      expect(facts.original_id).toBe(original);
      expect(facts.flow_deliveries, id).toBe(2);
      expect(facts.delivered_event_ids).toEqual([original, replay]);
      expect(facts.summary).toMatch(/2 times/);
    }
  });
});

// The events list filtered by several states reads one page per state and merges them (so a
// million-event shop is not sorted per request): the pages must still be exactly the events in
// those states, in id order, in both orders, page after page with the cursor.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listEvents } from '../../api/src/reads/events.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { insertEvent, makeShop } from '../handoff/helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

it('state=failed,held pages through exactly those events in id order, both ways, with the cursor', async () => {
  const services = server.runtime.services;
  const { shop, endpointId } = await makeShop(services);
  const states = ['delivered', 'failed', 'held', 'no_workflow', 'failed', 'held', 'held'];
  const all: { id: string; state: string }[] = [];
  for (let i = 0; i < 21; i++) {
    const state = states[i % states.length] as string;
    all.push({ id: await insertEvent(services, shop.id, endpointId, { state }), state });
  }
  const wanted = all.filter((e) => e.state === 'failed' || e.state === 'held').map((e) => e.id);
  for (const order of ['desc', 'asc'] as const) {
    const seen: string[] = [];
    let cursorId: string | null = null;
    for (let page = 0; page < 10; page++) {
      const { rows, hasMore } = await listEvents(services, shop.id, {
        states: ['failed', 'held'],
        order,
        cursorId,
        limit: 4,
      });
      seen.push(...rows.map((r) => r.id));
      if (!hasMore) break;
      cursorId = rows.at(-1)?.id ?? null;
    }
    const expected = [...wanted].sort();
    expect(seen).toEqual(order === 'desc' ? expected.reverse() : expected);
  }
  // With another filter beside the states: it applies to every state's page.
  const none = await listEvents(services, shop.id, {
    states: ['failed', 'held'],
    eventType: 'no.such.type',
    order: 'desc',
    cursorId: null,
    limit: 4,
  });
  expect(none.rows).toEqual([]);
  const typed = await listEvents(services, shop.id, {
    states: ['failed', 'held'],
    eventType: 'test.event',
    order: 'desc',
    cursorId: null,
    limit: 50,
  });
  expect(typed.rows.map((r) => r.id)).toEqual([...wanted].sort().reverse());
  expect(typed.hasMore).toBe(false);
});

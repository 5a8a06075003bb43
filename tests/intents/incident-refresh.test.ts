// Incidents are facts (ADR 1312): an open incident says what is wrong right now, so its summary and
// details follow what the monitor finds while it stays open (a frozen shop's held events: 0 when
// the shop froze, 4 once its events are held). The full run on PostgreSQL once saw `held_events: 0`
// on an incident opened by the background monitor before the events were held. Real store, HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../api/src/ids.ts';
import { openAlertIncident } from '../../api/src/store/tables/alerts.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api } from './helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

describe('an open incident', () => {
  it('takes the summary and details found now, and opens (notifies) once', async () => {
    const { db } = server.runtime.services;
    const shopId = server.sandbox?.shop_id as string;
    const open = (held: number) =>
      db.tx((tx) =>
        openAlertIncident(tx, {
          id: newId('incident', Date.now()),
          shopId,
          trigger: 'shop_held',
          subject: shopId,
          openKey: `shop_held:${shopId}`,
          summary: `${held} event(s) held`,
          detailsJson: JSON.stringify({ connection_status: 'frozen', held_events: held }),
          now: Date.now(),
        }),
      );
    expect(await open(0)).toBe(true);
    expect(await open(4)).toBe(false);
    const r = await api(server, server.sandbox?.grant_token as string, 'GET', '/agent/v1/incidents?state=open');
    expect(r.status, r.text).toBe(200);
    const incidents = (r.json.data as { trigger: string; summary: string; details: Record<string, unknown> }[]).filter(
      (i) => i.trigger === 'shop_held',
    );
    expect(incidents).toHaveLength(1);
    expect(incidents[0]?.details).toMatchObject({ held_events: 4 });
    expect(incidents[0]?.summary).toBe('4 event(s) held');
  });
});

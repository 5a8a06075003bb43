// Receipts through the API, for every kind of request intake answers: accepted and duplicate
// requests (receipt derived from the event row) and rejected ones (a receipt row), on a real
// server and store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { INTAKE_SUPPORT_CODES } from '../../api/src/errors/codes/intake.ts';
import { newId } from '../../api/src/ids.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { hmacHex, newEndpoint, newShop, post } from './helpers.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

async function tokenFor(shopId: string): Promise<string> {
  const g = await createGrant(server.runtime.services, {
    shopId,
    tier: 'observer',
    actorKind: 'agent',
    actorName: 'receipts test',
    expiresInMs: 3_600_000,
  });
  return g.token;
}

async function api(token: string, path: string) {
  const res = await fetch(`${server.url}/agent/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

describe('receipts of accepted, duplicate and rejected requests', () => {
  it('reads each kind by id and lists them together, newest first; other shops get 404', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const { endpoint, secret } = await newEndpoint(services, shop.id, {
      authMode: 'hmac_sha256',
      mapping: { externalId: { kind: 'json', path: 'id' } },
    });
    const send = (body: string, sig = `sha256=${hmacHex(secret, body)}`) =>
      post(`${server.url}/in/${endpoint.id}`, body, { 'x-flowport-signature': sig });
    const body = JSON.stringify({ id: `ext_${newId('request')}`, type: 'order.paid' });

    const accepted = await send(body);
    const duplicate = await send(body);
    const rejected = await send(body, `sha256=${'0'.repeat(64)}`);
    expect([accepted.status, duplicate.status, rejected.status]).toEqual([202, 200, 401]);

    const token = await tokenFor(shop.id);
    const expected = [
      [
        accepted,
        {
          event_id: accepted.json.event_id,
          auth_result: 'verified',
          validation_result: 'valid',
          http_status: 202,
          error_code: null,
          support_code: INTAKE_SUPPORT_CODES.accepted.code,
        },
      ],
      [
        duplicate,
        {
          auth_result: 'verified',
          dedupe_decision: 'duplicate',
          http_status: 200,
          support_code: INTAKE_SUPPORT_CODES.duplicate.code,
        },
      ],
      [
        rejected,
        {
          event_id: null,
          auth_result: 'failed',
          http_status: 401,
          error_code: 'signature_mismatch',
          support_code: INTAKE_SUPPORT_CODES.signature.code,
        },
      ],
    ] as const;
    for (const [res, facts] of expected) {
      const receiptId = String(res.json.receipt_id);
      const got = await api(token, `/receipts/${receiptId}`);
      expect(got.status).toBe(200);
      expect(got.json).toMatchObject({
        id: receiptId,
        endpoint_id: endpoint.id,
        request_id: res.headers.get('x-request-id'),
        endpoint_config_version: 1,
        ...facts,
      });
    }
    // The accepted receipt names a unique external id and shows where the handoff stands.
    const acc = await api(token, `/receipts/${accepted.json.receipt_id}`);
    expect(acc.json.dedupe_decision).toBe('unique');
    expect(acc.json.handoff).toMatchObject({ state: 'queued' });

    const diag = await api(token, '/diagnostics');
    expect(diag.status).toBe(200);
    expect(diag.json.recent_receipts.map((r: { id: string }) => r.id)).toEqual(
      [rejected, duplicate, accepted].map((r) => r.json.receipt_id),
    );

    // Another shop's grant sees none of them.
    const other = await tokenFor((await newShop(services)).id);
    for (const res of [accepted, duplicate, rejected]) {
      expect((await api(other, `/receipts/${res.json.receipt_id}`)).status).toBe(404);
    }
  });
});

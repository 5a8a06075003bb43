// Helpers for the action-intent tests: signed sender requests, API calls with a
// grant, bounded polling of the real store and the sandbox's received triggers.
import { createHmac, randomUUID } from 'node:crypto';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createGrant } from '../../api/src/auth/grants.ts';
import type { Scope, Tier } from '../../api/src/auth/scopes.ts';
import type { Services } from '../../api/src/core/types.ts';
import { newId } from '../../api/src/ids.ts';
import { PROJECT_NODE, REPO_ROOT } from '../helpers/process.ts';
import type { TestServer } from '../helpers/runtime.ts';
import { countStoredEvents } from '../../api/src/store/tables/events/window-counts.ts';

export interface ApiResult {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

export async function api(
  server: TestServer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResult> {
  // In-process through the app (no socket): these tests are about the operations, not the wire.
  const res = await server.runtime.app.request(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, text, json, headers: res.headers };
}

export function confirm(server: TestServer, token: string, intentId: string, key: string = randomUUID()) {
  return api(server, token, 'POST', `/agent/v1/action-intents/${intentId}/confirm`, undefined, {
    'idempotency-key': key,
  });
}

/** Sends a body signed with the default hmac_sha256 settings (x-flowport-signature: sha256=<hex>). */
export async function sendSigned(server: TestServer, endpointId: string, secret: string, body: unknown) {
  const raw = JSON.stringify(body);
  const sig = createHmac('sha256', secret).update(raw).digest('hex');
  const res = await fetch(`${server.url}/in/${endpointId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-flowport-signature': `sha256=${sig}` },
    body: raw,
  });
  return { status: res.status, json: (await res.json()) as any };
}

export async function waitFor<T>(fn: () => Promise<T | undefined>, tries = 400): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('condition not reached');
}

export async function eventState(server: TestServer, id: string): Promise<string | undefined> {
  const row = await server.runtime.services.db.get<{ state: string }>('SELECT state FROM events WHERE id = ?', [id]);
  return row?.state;
}

export function waitDelivered(server: TestServer, id: string) {
  return waitFor(async () => ((await eventState(server, id)) === 'delivered' ? true : undefined));
}

export async function sandboxTriggers(
  server: TestServer,
  shopDomain: string,
): Promise<{ handle: string; payload: Record<string, unknown> }[]> {
  const r = await fetch(`${server.url}/sandbox/shopify/triggers?shop=${shopDomain}`);
  return ((await r.json()) as { triggers: { handle: string; payload: Record<string, unknown> }[] }).triggers;
}

export async function triggerFor(server: TestServer, shopDomain: string, eventId: string) {
  return waitFor(async () =>
    (await sandboxTriggers(server, shopDomain)).find((t) => JSON.stringify(t.payload).includes(eventId)),
  );
}

export async function grant(
  server: TestServer,
  tier: Tier,
  name: string,
  kind: 'agent' | 'human' = 'agent',
  extraScopes: Scope[] = [],
) {
  return createGrant(server.runtime.services, {
    shopId: server.sandbox!.shop_id,
    tier,
    extraScopes,
    actorKind: kind,
    actorName: name,
    expiresInMs: 3_600_000,
  });
}

/** A delivered event on the sandbox endpoint. */
export async function deliveredEvent(
  server: TestServer,
  body: Record<string, unknown> = { type: 'order.paid', id: randomUUID() },
) {
  const creds = server.sandbox!;
  const ack = await sendSigned(server, creds.endpoint_id, creds.signing_secret, body);
  if (ack.status !== 202) throw new Error(`intake answered ${ack.status}: ${JSON.stringify(ack.json)}`);
  await waitDelivered(server, ack.json.event_id);
  return ack.json.event_id as string;
}

/** `n` failed events of the sandbox endpoint, written in one transaction. */
export async function failedEvents(
  services: Services,
  shopId: string,
  endpointId: string,
  n: number,
  opts: { errorCode?: string; receivedAt?: number } = {},
): Promise<string[]> {
  const ids: string[] = [];
  const now = opts.receivedAt ?? services.now() - 3_600_000;
  await services.db.tx(async (tx) => {
    for (let i = 0; i < n; i++) {
      const id = newId('event');
      const body = JSON.stringify({ type: 'bulk.test', i, id });
      await tx.run(
        `INSERT INTO events (id, shop_id, endpoint_id, receipt_id, state, error_code, event_type, sender, body, body_size, body_sha256,
           config_version, received_at, updated_at, attempt_count)
         VALUES (?, ?, ?, ?, 'failed', ?, 'bulk.test', 'tests', ?, ?, ?, 1, ?, ?, 8)`,
        [
          id,
          shopId,
          endpointId,
          newId('receipt'),
          opts.errorCode ?? 'flow_unavailable',
          body,
          Buffer.byteLength(body),
          'x'.repeat(64),
          now + i,
          now + i,
        ],
      );
      ids.push(id);
    }
    // Written directly: the window's counts are added as an insert path would (ADR 0313).
    await countStoredEvents(tx, ids);
  });
  return ids;
}

/**
 * Starts `flowport worker` as its own process against the test server's store (a slow bulk replay
 * rate, short leases), for tests that kill -9 the process running a bulk replay. The caller keeps
 * `children` and kills what is left after the test.
 */
export function spawnBulkReplayWorker(server: TestServer, children: ChildProcess[]): ChildProcess {
  const child = spawn(PROJECT_NODE, [join(REPO_ROOT, 'bin/flowport.js'), 'worker'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...server.storeEnv,
      PORT: String(server.port),
      FLOWPORT_LOG_LEVEL: 'silent',
      FLOWPORT_BULK_REPLAY_RATE: '10',
      FLOWPORT_WORKER_LEASE_MS: '1500',
      FLOWPORT_WORKER_REQUEST_TIMEOUT_MS: '1000',
    },
    stdio: 'ignore',
  });
  children.push(child);
  return child;
}

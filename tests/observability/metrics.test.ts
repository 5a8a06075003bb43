// GET /metrics over real HTTP on loopback: the scrape is parsed with a Prometheus text parser and
// its counters match what was sent (accepted, refused, unknown endpoint, handoffs, refusals of the
// Agent API); loopback-only unless the metrics token is sent; labels bounded (no event ids).
import { request } from 'node:http';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { postSigned, waitFor, workerSettings } from '../handoff/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

interface Family {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string }[];
}

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789abcdef';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    env: { FLOWPORT_METRICS_TOKEN: METRICS_TOKEN },
    configure: workerSettings({ retryBaseMs: 10, retryCapMs: 50 }),
  });
});
afterAll(async () => {
  await server?.close();
});

/** A GET with exactly these headers (fetch would set Host itself). */
function get(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method: 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function scrape(): Promise<Map<string, Family>> {
  const res = await get('/metrics', { host: `127.0.0.1:${server.port}` });
  expect(res.status).toBe(200);
  const families = parsePrometheusTextFormat(res.body) as Family[];
  return new Map(families.map((f) => [f.name, f]));
}

function value(f: Family | undefined, labels: Record<string, string>): number {
  const m = f?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return m ? Number(m.value ?? m.count) : 0;
}

describe('/metrics', () => {
  it('counts what was sent: accepted, refused and unknown-endpoint intake, handoffs, refusals', async () => {
    const sb = server.sandbox;
    if (!sb) throw new Error('sandbox expected');
    const before = await scrape();
    const ACCEPTED = 7;
    const BAD_SIG = 3;
    const ids: string[] = [];
    for (let i = 0; i < ACCEPTED; i++) {
      const res = await postSigned(sb.ingest_url, sb.signing_secret, JSON.stringify({ id: `m-${i}`, n: i }));
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { event_id: string }).event_id);
    }
    for (let i = 0; i < BAD_SIG; i++) {
      const res = await postSigned(sb.ingest_url, 'not-the-secret', JSON.stringify({ id: `bad-${i}` }));
      expect(res.status).toBe(401);
    }
    const unknown = await postSigned(
      `${server.url}/in/ep_00000000000000000000000000`,
      sb.signing_secret,
      JSON.stringify({ id: 'nobody' }),
    );
    expect(unknown.status).toBe(404);
    const badToken = await fetch(`${server.url}/agent/v1/events`, { headers: { authorization: 'Bearer nope' } });
    expect(badToken.status).toBe(401);
    const badCode = ((await badToken.json()) as { code: string }).code;
    // Every accepted event reaches Flow: the worker has counted the calls and the store holds the
    // outcomes (the counter moves when Shopify answers, the row when the outcome is committed).
    await waitFor(async () => {
      const now = await scrape();
      const calls =
        value(now.get('flowport_worker_attempts_total'), { outcome: 'delivered' }) -
        value(before.get('flowport_worker_attempts_total'), { outcome: 'delivered' });
      const rows =
        value(now.get('flowport_events'), { state: 'delivered' }) -
        value(before.get('flowport_events'), { state: 'delivered' });
      return calls >= ACCEPTED && rows >= ACCEPTED ? true : null;
    }, 'every accepted event delivered');
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      value(after.get(name), labels) - value(before.get(name), labels);
    const ep = sb.endpoint_id;
    expect(delta('flowport_intake_requests_total', { endpoint: ep, outcome: 'queued', error_code: '' })).toBe(ACCEPTED);
    const sigCodes = (after.get('flowport_intake_requests_total')?.metrics ?? []).filter(
      (m) => m.labels?.endpoint === ep && m.labels?.outcome === 'rejected',
    );
    expect(sigCodes.reduce((n, m) => n + Number(m.value), 0)).toBe(BAD_SIG);
    expect(sigCodes.every((m) => /^signature_/.test(m.labels?.error_code ?? ''))).toBe(true);
    expect(
      delta('flowport_intake_requests_total', { endpoint: 'unknown', outcome: 'rejected', error_code: 'not_found' }),
    ).toBe(1);
    expect(delta('flowport_refusals_total', { layer: 'authority', code: badCode })).toBe(1);
    // Histograms: this parser folds labelled histograms into one unlabelled sample, so their
    // `_count` series are read from the text (the families themselves are checked parsed).
    const raw = (await get('/metrics', { host: `127.0.0.1:${server.port}` })).body;
    const countOf = (series: string) =>
      Number(new RegExp(`^${series.replace(/[{}./:]/g, '\\$&')} (\\S+)$`, 'm').exec(raw)?.[1]);
    expect(after.get('flowport_http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(
      countOf(
        'flowport_http_request_duration_seconds_count{route="/in/:endpoint_id",method="POST",status_class="2xx"}',
      ),
    ).toBeGreaterThanOrEqual(ACCEPTED);
    expect(countOf('flowport_group_commit_batch_size_count{committer="intake"}')).toBeGreaterThan(0);
    expect(countOf('flowport_intake_to_flow_seconds_count')).toBeGreaterThanOrEqual(ACCEPTED);
    expect(value(after.get('flowport_events'), { state: 'delivered' })).toBeGreaterThanOrEqual(ACCEPTED);
    expect(after.has('flowport_queue_depth')).toBe(true);
    expect(after.has('flowport_oldest_due_event_age_seconds')).toBe(true);
    expect(after.has('flowport_held_shops')).toBe(true);
    expect(after.has('flowport_shopify_throttled_shops')).toBe(true);
    expect(after.has('flowport_retention_sweeps_total')).toBe(true);
    expect(after.has('flowport_intents')).toBe(true);
    // Bounded labels: no event id anywhere in the scrape.
    for (const id of ids) expect(raw).not.toContain(id);
    expect(raw).not.toMatch(/evt_[0-9a-z]{26}/);
  });

  it('answers loopback requests made directly, and refuses proxied, rebound or cross-origin ones and a wrong token', async () => {
    const host = `127.0.0.1:${server.port}`;
    expect((await get('/metrics', { host: `localhost:${server.port}` })).status).toBe(200);
    const refused: Record<string, string>[] = [
      { host: 'metrics.example.com' },
      { host: `localhost:${server.port + 1}` },
      { host, 'x-forwarded-for': '203.0.113.9' },
      { host, forwarded: 'for=203.0.113.9' },
      { host, via: '1.1 proxy' },
      { host, origin: 'https://attacker.example' },
    ];
    // Not this machine: 404, as every loopback-only route answers (the shared guard).
    for (const headers of refused) {
      const res = await get('/metrics', headers);
      expect(res.status, JSON.stringify(headers)).toBe(404);
      expect(JSON.parse(res.body).code).toBe('not_found');
      expect(res.body).not.toContain('flowport_');
    }
    // Credentials are judged alone: a wrong token is refused even on loopback.
    const wrong = await get('/metrics', { host, authorization: 'Bearer wrong-token-wrong-token-wrong-token' });
    expect(wrong.status).toBe(403);
    expect(JSON.parse(wrong.body).code).toBe('metrics_not_allowed');
    expect(wrong.body).not.toContain('flowport_');
  });

  it('with the metrics token, serves a scraper behind a proxy', async () => {
    const res = await get('/metrics', {
      host: 'metrics.example.com',
      'x-forwarded-for': '203.0.113.9',
      authorization: `Bearer ${METRICS_TOKEN}`,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/^# TYPE flowport_intake_requests_total counter$/m);
  });
});

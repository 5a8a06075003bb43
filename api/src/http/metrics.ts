// GET /metrics: Prometheus text for the handoff. Durable facts come from the
// store (events by state, possible duplicates, attempts by outcome); in-process
// counters from this process's worker.
import { Hono } from 'hono';
import type { Services } from '../core/types.ts';
import { EVENT_STATES } from '../handoff/outcomes.ts';
import type { DeliveryWorker } from '../handoff/worker.ts';

function line(name: string, value: number, labels: Record<string, string> = {}): string {
  const l = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, '_')}"`);
  return `${name}${l.length ? `{${l.join(',')}}` : ''} ${value}`;
}

export async function renderMetrics(services: Services, worker: DeliveryWorker | null): Promise<string> {
  const { db } = services;
  const out: string[] = [];
  const states = await db.all<{ state: string; n: number }>('SELECT state, COUNT(*) AS n FROM events GROUP BY state');
  const byState = new Map(states.map((r) => [r.state, Number(r.n)]));
  out.push('# HELP flowport_events Events by lifecycle state.', '# TYPE flowport_events gauge');
  for (const s of EVENT_STATES) out.push(line('flowport_events', byState.get(s) ?? 0, { state: s }));
  const dup = await db.get<{ n: number | null; e: number }>(
    'SELECT SUM(possible_duplicate_deliveries) AS n, COUNT(*) AS e FROM events WHERE possible_duplicate_deliveries > 0',
  );
  out.push(
    '# HELP flowport_possible_duplicate_deliveries_total Calls whose outcome is unknown (a lease expired mid-delivery, Shopify did not answer in time, or the connection broke once open): Flow may have run the event more than once.',
    '# TYPE flowport_possible_duplicate_deliveries_total counter',
    line('flowport_possible_duplicate_deliveries_total', Number(dup?.n ?? 0)),
    '# HELP flowport_events_with_possible_duplicates Events with at least one possible duplicate delivery.',
    '# TYPE flowport_events_with_possible_duplicates gauge',
    line('flowport_events_with_possible_duplicates', Number(dup?.e ?? 0)),
  );
  const attempts = await db.all<{ outcome: string; n: number }>(
    'SELECT outcome, COUNT(*) AS n FROM attempts GROUP BY outcome',
  );
  out.push(
    '# HELP flowport_handoff_attempts Flow delivery attempts by outcome (all workers).',
    '# TYPE flowport_handoff_attempts gauge',
  );
  for (const a of attempts) out.push(line('flowport_handoff_attempts', Number(a.n), { outcome: a.outcome }));
  const shops = await db.all<{ connection_status: string; n: number }>(
    'SELECT connection_status, COUNT(*) AS n FROM shops GROUP BY connection_status',
  );
  out.push('# HELP flowport_shops Shops by Shopify connection status.', '# TYPE flowport_shops gauge');
  for (const s of shops) out.push(line('flowport_shops', Number(s.n), { connection_status: s.connection_status }));
  if (worker) {
    out.push(
      '# HELP flowport_worker_in_flight Deliveries in flight in this process.',
      '# TYPE flowport_worker_in_flight gauge',
      line('flowport_worker_in_flight', worker.inFlight),
      '# HELP flowport_worker_reclaimed_leases_total Expired leases this process re-claimed.',
      '# TYPE flowport_worker_reclaimed_leases_total counter',
      line('flowport_worker_reclaimed_leases_total', worker.stats.reclaimedLeases),
      '# HELP flowport_worker_attempts_total Attempts finished by this process, by outcome.',
      '# TYPE flowport_worker_attempts_total counter',
    );
    for (const [outcome, n] of Object.entries(worker.stats.attempts))
      out.push(line('flowport_worker_attempts_total', n ?? 0, { outcome }));
  }
  return `${out.join('\n')}\n`;
}

export function metricsRoutes(getServices: () => Services, getWorker: () => DeliveryWorker | null): Hono {
  const app = new Hono();
  app.get('/', async (c) => {
    c.header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
    return c.body(await renderMetrics(getServices(), getWorker()));
  });
  return app;
}

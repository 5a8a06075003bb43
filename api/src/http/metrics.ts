// GET /metrics: Prometheus text for the handoff. Durable facts come from the
// store (events by state, possible duplicates, attempts by outcome); in-process
// counters from this process's worker.
import type { IncomingMessage } from 'node:http';
import { Hono } from 'hono';
import { ENV } from '../config.ts';
import { AppError } from '../errors/problem.ts';
import { loopbackRefusal } from '../lib/loopback-guard.ts';
import type { Services } from '../core/types.ts';
import { handoffCounts } from '../handoff/counts.ts';
import { EVENT_STATES } from '../handoff/outcomes.ts';
import type { DeliveryWorker } from '../handoff/worker.ts';

function line(name: string, value: number, labels: Record<string, string> = {}): string {
  const l = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, '_')}"`);
  return `${name}${l.length ? `{${l.join(',')}}` : ''} ${value}`;
}

export async function renderMetrics(services: Services, worker: DeliveryWorker | null): Promise<string> {
  const { states, duplicates: dup, attempts, shops } = await handoffCounts(services.db);
  const out: string[] = [];
  const byState = new Map(states.map((r) => [r.state, Number(r.n)]));
  out.push('# HELP flowport_events Events by lifecycle state.', '# TYPE flowport_events gauge');
  for (const s of EVENT_STATES) out.push(line('flowport_events', byState.get(s) ?? 0, { state: s }));
  out.push(
    '# HELP flowport_possible_duplicate_deliveries_total Calls whose outcome is unknown (a lease expired mid-delivery, Shopify did not answer in time, or the connection broke once open): Flow may have run the event more than once.',
    '# TYPE flowport_possible_duplicate_deliveries_total counter',
    line('flowport_possible_duplicate_deliveries_total', Number(dup?.n ?? 0)),
    '# HELP flowport_events_with_possible_duplicates Events with at least one possible duplicate delivery.',
    '# TYPE flowport_events_with_possible_duplicates gauge',
    line('flowport_events_with_possible_duplicates', Number(dup?.e ?? 0)),
  );
  out.push(
    '# HELP flowport_handoff_attempts Flow delivery attempts by outcome (all workers).',
    '# TYPE flowport_handoff_attempts gauge',
  );
  for (const a of attempts) out.push(line('flowport_handoff_attempts', Number(a.n), { outcome: a.outcome }));
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
  // Counts over every shop: this machine only, unless FLOWPORT_METRICS_REMOTE=on (lib/loopback-guard.ts).
  app.use('*', async (c, next) => {
    if (getServices().config.metrics.remote) return next();
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const refusal = loopbackRefusal(incoming, c.req.raw.headers, c.req.method);
    if (refusal) {
      throw new AppError('not_found', {
        detail: `/metrics answers only this machine: its counts cover every shop. ${refusal.detail} Set ${ENV.metricsRemote}=on to serve it to a scraper on another host.`,
      });
    }
    await next();
  });
  app.get('/', async (c) => {
    c.header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
    return c.body(await renderMetrics(getServices(), getWorker()));
  });
  return app;
}

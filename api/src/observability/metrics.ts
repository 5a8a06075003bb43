// One process's Prometheus metrics (prom-client): a registry per runtime, served at GET /metrics
// (api/src/observability/metrics-route.ts). Each process counts what it did itself; durable facts
// (events by state, queue depth per shop, intents by kind and state) are read from the store when
// scraped, so every process reports the same for those. Labels stay bounded: endpoint and shop
// ids (one series per configured endpoint or shop, never per event), outcomes, error codes from
// the catalog, route patterns, never free text or event ids.
//
// The intake hot path does not call prom-client per request (a labelled inc hashes its labels):
// it bumps a plain number in a cell bound once per endpoint and outcome (IntakeCell), and the
// counter reads the cells when scraped. HTTP latency is likewise a cell histogram: a bound cell's
// observe is a bucket search and three additions.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../store/db.ts';
import {
  countEventsByState,
  countEventsWithPossibleDuplicates,
  oldestDueEventByShop,
  possibleDuplicateTotals,
  queueDepthByShop,
} from '../store/tables/events/gauges.ts';
import { countIntentsByKindAndState } from '../store/tables/intents.ts';
import { countHeldShops, countShopsByConnection } from '../store/tables/shops.ts';

/** Seconds; from a fast loopback intake answer to a slow Shopify call. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds from intake to Flow's answer: retries and holds stretch this to hours. */
const INTAKE_TO_FLOW_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 86_400];
const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/** Intake outcomes as labels: the ack statuses and `rejected` (with the error code). */
export type IntakeOutcome = 'queued' | 'duplicate_suppressed' | 'handshake' | 'rejected';

/** A pre-bound counter cell: the hot path does `cell.n++`. */
export interface IntakeCell {
  n: number;
  readonly labels: { endpoint: string; outcome: IntakeOutcome; error_code: string };
}

/** Endpoint label of a request whose endpoint is not known (never the raw id from the URL). */
export const UNKNOWN_ENDPOINT = 'unknown';

/** A pre-bound histogram cell. */
export class HistogramCell {
  readonly counts: number[];
  readonly labels: Record<string, string>;
  private readonly bounds: readonly number[];
  sum = 0;
  count = 0;
  constructor(labels: Record<string, string>, bounds: readonly number[]) {
    this.labels = labels;
    this.bounds = bounds;
    this.counts = new Array<number>(bounds.length).fill(0);
  }
  observe(seconds: number): void {
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (seconds <= (b[i] as number)) {
        (this.counts as number[])[i] = (this.counts[i] as number) + 1;
        break;
      }
    }
    this.sum += seconds;
    this.count++;
  }
}

/**
 * A histogram whose series are cells bound once (route × method × status class), formatted by
 * prom-client's registry like any of its own metrics (the registry calls `get()`).
 */
export class CellHistogram {
  readonly type = 'histogram';
  private readonly cells = new Map<string, HistogramCell>();
  readonly name: string;
  readonly help: string;
  readonly bounds: readonly number[];
  constructor(name: string, help: string, bounds: readonly number[]) {
    this.name = name;
    this.help = help;
    this.bounds = bounds;
  }

  cell(key: string, labels: Record<string, string>): HistogramCell {
    let c = this.cells.get(key);
    if (!c) {
      c = new HistogramCell(labels, this.bounds);
      this.cells.set(key, c);
    }
    return c;
  }

  /** The shape prom-client's registry formats (what its own metrics' get() returns). */
  get(): {
    name: string;
    help: string;
    type: string;
    aggregator: 'sum';
    values: { value: number; labels: Record<string, string | number>; metricName: string }[];
  } {
    const values: { value: number; labels: Record<string, string | number>; metricName: string }[] = [];
    for (const c of this.cells.values()) {
      let acc = 0;
      for (const [i, le] of this.bounds.entries()) {
        acc += c.counts[i] as number;
        values.push({ value: acc, labels: { ...c.labels, le }, metricName: `${this.name}_bucket` });
      }
      values.push({ value: c.count, labels: { ...c.labels, le: '+Inf' }, metricName: `${this.name}_bucket` });
      values.push({ value: c.sum, labels: c.labels, metricName: `${this.name}_sum` });
      values.push({ value: c.count, labels: c.labels, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }
}

/** What the worker lends the scrape (in-memory facts only it has). */
export interface WorkerFacts {
  throttledShops(): number;
  inFlight: number;
  stats: { reclaimedLeases: number; attempts: Partial<Record<string, number>> };
}

export class Metrics {
  readonly registry = new Registry();
  private readonly intakeCells = new Map<string, IntakeCell>();
  readonly http: CellHistogram;
  readonly commitBatchSize: Histogram<'committer'>;
  readonly commitSeconds: Histogram<'committer'>;
  readonly intakeToFlowSeconds: Histogram;
  readonly retentionSweeps: Counter<'result'>;
  readonly retentionPurged: Counter;
  readonly refusals: Counter<'layer' | 'code'>;
  readonly throttles: Counter;
  readonly bulkReplayEvents: Counter<'result'>;
  worker: WorkerFacts | null = null;

  constructor(db: Db, options: { defaultMetrics?: boolean; eventStates?: readonly string[] } = {}) {
    const eventStates = options.eventStates ?? [];
    const registers = [this.registry];
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'flowport_' });
    const cells = this.intakeCells;
    new Counter({
      name: 'flowport_intake_requests_total',
      help: 'Sender intake requests answered by this process, by endpoint, outcome and error code (empty when accepted).',
      labelNames: ['endpoint', 'outcome', 'error_code'] as const,
      registers,
      collect() {
        this.reset();
        for (const c of cells.values()) this.inc(c.labels, c.n);
      },
    });
    this.http = new CellHistogram(
      'flowport_http_request_duration_seconds',
      'HTTP request latency in this process by route pattern, method and status class.',
      LATENCY_BUCKETS,
    );
    this.registry.registerMetric(this.http as never);
    this.commitBatchSize = new Histogram({
      name: 'flowport_group_commit_batch_size',
      help: 'Items per group-commit transaction (intake requests, or delivery outcomes for the worker).',
      labelNames: ['committer'] as const,
      buckets: BATCH_SIZE_BUCKETS,
      registers,
    });
    this.commitSeconds = new Histogram({
      name: 'flowport_group_commit_seconds',
      help: 'Time from a group-commit transaction start to durable commit.',
      labelNames: ['committer'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    });
    registerWorkerMetrics(registers, () => this.worker);
    this.throttles = new Counter({
      name: 'flowport_shopify_throttled_total',
      help: 'Flow calls Shopify answered as throttled (or whose bucket ran low) in this process.',
      registers,
    });
    this.intakeToFlowSeconds = new Histogram({
      name: 'flowport_intake_to_flow_seconds',
      help: "Time from an event's intake to Flow accepting its handoff (delivered events).",
      buckets: INTAKE_TO_FLOW_BUCKETS,
      registers,
    });
    this.retentionSweeps = new Counter({
      name: 'flowport_retention_sweeps_total',
      help: 'Retention sweeps run by this process, by result (ok, failed).',
      labelNames: ['result'] as const,
      registers,
    });
    this.retentionPurged = new Counter({
      name: 'flowport_retention_purged_bodies_total',
      help: 'Event bodies purged by retention sweeps of this process.',
      registers,
    });
    this.refusals = new Counter({
      name: 'flowport_refusals_total',
      help: 'Operation calls refused (REST, MCP, CLI) in this process, by refusal layer and error code.',
      labelNames: ['layer', 'code'] as const,
      registers,
    });
    this.bulkReplayEvents = new Counter({
      name: 'flowport_bulk_replay_events_total',
      help: 'Events a bulk replay handled in this process, by result (replayed, refused, failed).',
      labelNames: ['result'] as const,
      registers,
    });

    registerStoreGauges(registers, db, eventStates);
  }

  /** The cell one endpoint's requests with this outcome count into (bound once, then `n++`). */
  intakeCell(endpoint: string, outcome: IntakeOutcome, errorCode = ''): IntakeCell {
    const key = `${endpoint}|${outcome}|${errorCode}`;
    let c = this.intakeCells.get(key);
    if (!c) {
      c = { n: 0, labels: { endpoint, outcome, error_code: errorCode } };
      this.intakeCells.set(key, c);
    }
    return c;
  }

  /** The latency cell of a route pattern, method and status class (`2xx` …). */
  httpCell(route: string, method: string, status: number): HistogramCell {
    const cls = `${Math.floor(status / 100)}xx`;
    return this.http.cell(`${route} ${method} ${cls}`, { route, method, status_class: cls });
  }

  /** What a group committer reports per durable batch (size, start to durable commit). */
  committerObserver(committer: 'intake' | 'handoff'): (items: number, seconds: number) => void {
    const size = this.commitBatchSize.labels(committer);
    const time = this.commitSeconds.labels(committer);
    return (items, seconds) => {
      size.observe(items);
      time.observe(seconds);
    };
  }

  /** The Prometheus text of this process. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The worker's in-process facts, read at scrape time from the worker this process runs (if any). */
function registerWorkerMetrics(registers: Registry[], worker: () => WorkerFacts | null): void {
  new Counter({
    name: 'flowport_worker_attempts_total',
    help: 'Flow handoff attempts finished by this process, by outcome.',
    labelNames: ['outcome'] as const,
    registers,
    collect() {
      this.reset();
      for (const [outcome, n] of Object.entries(worker()?.stats.attempts ?? {})) this.inc({ outcome }, n ?? 0);
    },
  });
  new Counter({
    name: 'flowport_worker_reclaimed_leases_total',
    help: 'Expired leases this process re-claimed (each a possible duplicate delivery).',
    registers,
    collect() {
      this.reset();
      this.inc(worker()?.stats.reclaimedLeases ?? 0);
    },
  });
  new Gauge({
    name: 'flowport_worker_in_flight',
    help: 'Deliveries in flight in this process.',
    registers,
    collect() {
      this.set(worker()?.inFlight ?? 0);
    },
  });
  new Gauge({
    name: 'flowport_shopify_throttled_shops',
    help: "Shops this process's worker is pausing because Shopify's throttle status asked it to.",
    registers,
    collect() {
      this.set(worker()?.throttledShops() ?? 0);
    },
  });
}

type Sample<L extends string> = [labels: Partial<Record<L, string>>, value: number];

/** A gauge set at scrape time from one store query: one sample per row; the last scrape's samples are dropped. */
function gaugeOfRows<L extends string>(
  registers: Registry[],
  spec: { name: string; help: string; labelNames: readonly L[]; samples: () => Promise<Sample<L>[]> },
): void {
  const { samples, ...gauge } = spec;
  new Gauge({
    ...gauge,
    registers,
    async collect() {
      const rows = await samples();
      this.reset();
      for (const [labels, value] of rows) this.set(labels, value);
    },
  });
}

/** Durable facts, read from the store at scrape time (store-wide). */
function registerStoreGauges(registers: Registry[], db: Db, eventStates: readonly string[]): void {
  new Gauge({
    name: 'flowport_events',
    help: 'Events by lifecycle state (store-wide).',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const rows = await countEventsByState(db);
      this.reset();
      // Every known state (given by the runtime: the list lives in the handoff), zero when empty.
      for (const st of eventStates) this.set({ state: st }, 0);
      for (const r of rows) this.set({ state: r.state }, Number(r.n));
    },
  });
  const dup = { n: 0, e: 0 };
  new Counter({
    name: 'flowport_possible_duplicate_deliveries_total',
    help: 'Calls whose outcome is unknown (a lease expired mid-delivery, Shopify did not answer in time, or the connection broke once open): Flow may have run the event more than once (store-wide).',
    registers,
    async collect() {
      const r = await possibleDuplicateTotals(db);
      dup.n = Number(r?.n ?? 0);
      dup.e = Number(r?.e ?? 0);
      this.reset();
      this.inc(dup.n);
    },
  });
  new Gauge({
    name: 'flowport_events_with_possible_duplicates',
    help: 'Events with at least one possible duplicate delivery (store-wide).',
    registers,
    async collect() {
      this.set(await countEventsWithPossibleDuplicates(db));
    },
  });
  gaugeOfRows(registers, {
    name: 'flowport_queue_depth',
    help: 'Events waiting for handoff (queued or delivering) per shop (store-wide).',
    labelNames: ['shop'],
    samples: async () => (await queueDepthByShop(db)).map((r) => [{ shop: r.shop_id }, Number(r.n)]),
  });
  gaugeOfRows(registers, {
    name: 'flowport_oldest_due_event_age_seconds',
    help: 'Age of the oldest queued event already due for handoff, per shop (store-wide; absent when none is due).',
    labelNames: ['shop'],
    samples: async () => {
      const now = Date.now();
      const rows = await oldestDueEventByShop(db, now);
      return rows.map((r) => [{ shop: r.shop_id }, Math.max(0, (now - Number(r.oldest)) / 1000)]);
    },
  });
  gaugeOfRows(registers, {
    name: 'flowport_shops',
    help: 'Shops by Shopify connection status (store-wide).',
    labelNames: ['connection_status'],
    samples: async () =>
      (await countShopsByConnection(db)).map((r) => [{ connection_status: r.connection_status }, Number(r.n)]),
  });
  gaugeOfRows(registers, {
    name: 'flowport_held_shops',
    help: 'Shops whose events are held: Shopify refused the store (frozen, locked), its token was revoked, or the app was uninstalled (store-wide).',
    labelNames: ['reason'],
    samples: async () => (await countHeldShops(db)).map((r) => [{ reason: r.connection_status }, Number(r.n)]),
  });
  gaugeOfRows(registers, {
    name: 'flowport_intents',
    help: 'Action intents by kind and state (store-wide).',
    labelNames: ['kind', 'state'],
    samples: async () =>
      (await countIntentsByKindAndState(db)).map((r) => [{ kind: r.kind, state: r.state }, Number(r.n)]),
  });
}

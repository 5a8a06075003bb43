// The intake pipeline for one endpoint request: state checks, size and media
// type, authentication on the raw bytes, JSON and mapping validation, then one
// group-committed write (dedupe, plan cap, event row, usage counter). An accepted
// or duplicate request's receipt is its event row (request id included; see
// reads/receipts.ts); a rejection gets a receipt row (no body), within a
// per-endpoint budget. A verified sender handshake (Slack's url_verification,
// GitHub's ping; AUTH_MODE_FACTS) is answered with a receipt row and no event.
// A batch's event and receipt rows are written with
// multi-row INSERTs just before its COMMIT; dedupe and the plan cap are
// per-endpoint / per-shop lock keys, so they hold across API processes sharing
// Postgres.
import { type IntakeCell, UNKNOWN_ENDPOINT } from '../observability/metrics.ts';
import { ERROR_CATALOG, isErrorCode } from '../errors/catalog.ts';
import { isStoreFull, storeFullError } from '../store/full.ts';
import { AppError } from '../errors/problem.ts';
import { ACK_HTTP_STATUS, intakeSupportCode, INTAKE_SUPPORT_CODES } from '../errors/codes/intake.ts';
import { newId } from '../ids.ts';
import { receiptIdForEvent } from '../reads/receipts.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { bodyRetentionMs } from '../handoff/lifecycle.ts';
import { buildFlowPayload, FLOW_PAYLOAD_LIMIT_BYTES } from '../handoff/payload.ts';
import type { Services } from '../core/types.ts';
import { planOf, type Plan } from '../plans.ts';
import { decryptedSecrets, endpointConfig, type EndpointConfig } from '../services/endpoints.ts';
import type { EndpointRow } from '../store/tables/endpoints.ts';
import { type Db, insertMany, pgArrayLiteral, type SqlParam } from '../store/db.ts';
import { periodBounds, usagePeriod } from '../usage/meters.ts';
import { type Batch, GroupCommitter } from '../store/committer.ts';
import { BODY_NEVER_WHOLE } from '../errors/codes/intake.ts';
import { INTAKE_LIMITS } from './limits.ts';
import { mapBody, type Mapped } from './mapping.ts';
import { verifyRequest, verifySecret, type VerifySecret } from './verify.ts';
import { handshakeOf } from './auth-modes.ts';

interface CachedEndpoint {
  row: EndpointRow;
  config: EndpointConfig;
  plan: Plan;
  fetchedAt: number;
  /** Decrypted and made into HMAC keys once per cache entry (both are hot-path costs). */
  secrets: PreparedSecrets | null;
  /** The lock keys of this endpoint's requests (intakeLocks), made once per cache entry. */
  locks: { cap: readonly string[]; capAndDedupe: readonly string[] };
  /** The batch scratch key of this shop's usage counter. */
  usageKey: string;
  /** /metrics cells of this endpoint's accepted outcomes, bound once per cache entry (`n++` per request). */
  cells: Record<IntakeAck['status'], IntakeCell> | null;
}

/** Cells are shared by every cache entry of an endpoint (the metrics registry keeps them). */
const NO_CELL: IntakeCell = { n: 0, labels: { endpoint: '', outcome: 'queued', error_code: '' } };

interface PreparedSecrets {
  /** Every secret, the previous one with the end of its rotation overlap. */
  all: { secret: VerifySecret; expiresAt: number | null }[];
  /** True when some secret expires: the list is then filtered per request. */
  expiring: boolean;
  /** The secrets when none expires (the usual case): no per-request list. */
  current: VerifySecret[];
}

function preparedSecrets(services: Services, ep: CachedEndpoint): PreparedSecrets {
  const all = decryptedSecrets(services, ep.row).map((s) => ({
    secret: verifySecret(ep.config.authMode, s.value),
    expiresAt: s.expiresAt,
  }));
  return { all, expiring: all.some((s) => s.expiresAt !== null), current: all.map((s) => s.secret) };
}

export type IntakeAck =
  | { status: 'queued'; event_id: string; receipt_id: string }
  | { status: 'duplicate_suppressed'; event_id: string; receipt_id: string; duplicate_of: string }
  /** A sender's handshake (AUTH_MODE_FACTS[mode].handshake): answered, not stored as an event; `challenge` echoed when it has one. */
  | { status: 'handshake'; receipt_id: string; challenge?: string };

/**
 * Read-only request headers, lower-case names: a web `Headers` fits, and so does the Node
 * adapter in ./node-intake.ts (the fast path reads `IncomingMessage.headers` without copying).
 */
export interface HeaderReader {
  get(name: string): string | null;
  has(name: string): boolean;
}

/**
 * The sender closed the connection (or broke the HTTP framing) before its body was complete:
 * nobody is left to answer, so no receipt is written, nothing is stored and nothing is logged.
 */
export class SenderGoneError extends Error {
  constructor() {
    super('The sender closed the connection before the body was complete.');
  }
}

export interface IntakeRequest {
  endpointId: string;
  requestId: string;
  headers: HeaderReader;
  /**
   * Reads the body, refusing (payload_too_large) past `max` bytes without buffering the rest;
   * rejects with SenderGoneError when the sender goes away first.
   */
  readBody(max: number): Promise<Uint8Array>;
}

/** Where a request was refused; `store`: verified and valid, then the store could not take it. */
type Stage = 'state' | 'size' | 'media' | 'auth' | 'validation' | 'store';

export const EVENT_COLUMNS = [
  'id',
  'shop_id',
  'endpoint_id',
  'receipt_id',
  'request_id',
  'state',
  'support_code',
  'external_event_id',
  'event_type',
  'sender',
  'body',
  'body_size',
  'body_sha256',
  'resource_id',
  'related_resource_id',
  'config_version',
  'received_at',
  'updated_at',
  'next_attempt_at',
  'body_expires_at',
  'retention_state',
  'duplicate_of',
] as const;
export type EventInsert = Record<(typeof EVENT_COLUMNS)[number], SqlParam>;
/**
 * On SQLite the body is bound as the request's bytes and stored as TEXT by the cast (they are
 * valid UTF-8: validation decoded them strictly), which spares converting the decoded string back
 * to UTF-8 for the binding. On PostgreSQL the body is bound as the string (the cast does nothing).
 */
const EVENT_PLACEHOLDERS = EVENT_COLUMNS.map((c) => (c === 'body' ? 'CAST(? AS TEXT)' : '?'));

const RECEIPT_COLUMNS = [
  'id',
  'shop_id',
  'endpoint_id',
  'event_id',
  'request_id',
  'received_at',
  'auth_result',
  'validation_result',
  'dedupe_decision',
  'config_version',
  'http_status',
  'error_code',
  'support_code',
  'body_size',
  'body_sha256',
] as const;

/** Rows a batch writes just before it commits (multi-row INSERTs). */
interface BatchRows {
  events: SqlParam[][];
  receipts: SqlParam[][];
  /** Accepted events of this batch by `endpoint\0external id`: dedupe sees them before they are written. */
  firstByExternalId: Map<string, string>;
}

function batchRows(batch: Batch): BatchRows {
  let rows = batch.scratch.get('rows') as BatchRows | undefined;
  if (!rows) {
    const r: BatchRows = { events: [], receipts: [], firstByExternalId: new Map() };
    rows = r;
    batch.scratch.set('rows', r);
    batch.beforeCommit(async (tx) => {
      await insertMany(tx, 'events', EVENT_COLUMNS, r.events, EVENT_PLACEHOLDERS, { columnar: true });
      await insertMany(tx, 'receipts', RECEIPT_COLUMNS, r.receipts);
    });
  }
  return rows;
}

/** One batch's dedupe query on one endpoint: which external ids it read, from when, and the rows it found. */
interface DedupeLookup {
  from: number;
  covered: Set<string>;
  rows: Map<string, { id: string; received_at: number }[]>;
}

/** At most this many external ids in one dedupe query (well under both stores' parameter limits). */
const DEDUPE_LOOKUP_MAX = 500;

/** Lock keys of intake's cross-process checks (see committer.ts). */
export const intakeLocks = {
  dedupe: (endpointId: string) => `intake-dedupe:${endpointId}`,
  eventCap: (shopId: string) => `intake-event-cap:${shopId}`,
};

const JSON_MEDIA_RE = /^application\/([a-z0-9.+-]+\+)?json$/;
/** No content coding: the header empty or `identity` (case-insensitive, RFC 9110 §8.4). */
const IDENTITY_ENCODING_RE = /^\s*(identity)?\s*$/i;
/** Transfer codings other than chunking (RFC 9112 §6.1): only `chunked` (or `identity, chunked`) passes. */
const CHUNKED_ONLY_RE = /^\s*(identity\s*,\s*)?chunked\s*$/i;

/** Strict UTF-8 (a malformed byte throws); decode() without streaming keeps no state, so one serves all. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function secondsToNextPeriod(now: number): number {
  return Math.ceil((periodBounds(now).end - now) / 1000);
}

export class Intake {
  private readonly services: Services;
  readonly committer: GroupCommitter;
  private readonly cache = new Map<string, CachedEndpoint>();
  private readonly rejectionBudget = new Map<string, { minute: number; used: number }>();
  private readonly cacheMs: number;
  /**
   * External event ids submitted for dedupe and not yet checked, by endpoint: the first request of
   * a batch that needs a dedupe check looks all of them up in one query (dedupeLookup).
   */
  private readonly awaitingDedupe = new Map<string, Set<string>>();

  constructor(services: Services) {
    this.services = services;
    this.cacheMs = services.config.intake.endpointCacheMs;
    this.committer = new GroupCommitter(services.db, {
      maxBatch: INTAKE_LIMITS.maxBatch,
      ...(services.metrics ? { observe: services.metrics.committerObserver('intake') } : {}),
    });
  }

  /** The cached entry while it is fresh (no await: the hot path's usual case). */
  private fresh(id: string, now: number): CachedEndpoint | undefined {
    const hit = this.cache.get(id);
    return hit && now - hit.fetchedAt < this.cacheMs ? hit : undefined;
  }

  /** Endpoint + plan from the store, cached briefly: changes apply at invalidate() or within `config.intake.endpointCacheMs`. */
  private async lookup(id: string, now: number): Promise<CachedEndpoint | null> {
    const row = await this.services.db.get<EndpointRow & { shop_plan: string }>(
      'SELECT e.*, s.plan AS shop_plan FROM endpoints e JOIN shops s ON s.id = e.shop_id WHERE e.id = ?',
      [id],
    );
    if (!row || row.deleted_at) {
      this.cache.delete(id);
      return null;
    }
    const entry: CachedEndpoint = {
      row,
      config: endpointConfig(row),
      plan: planOf(row.shop_plan),
      fetchedAt: now,
      secrets: null,
      locks: {
        cap: [intakeLocks.eventCap(row.shop_id)],
        capAndDedupe: [intakeLocks.eventCap(row.shop_id), intakeLocks.dedupe(row.id)],
      },
      usageKey: `usage:${row.shop_id}`,
      cells: this.services.metrics
        ? {
            queued: this.services.metrics.intakeCell(row.id, 'queued'),
            duplicate_suppressed: this.services.metrics.intakeCell(row.id, 'duplicate_suppressed'),
            handshake: this.services.metrics.intakeCell(row.id, 'handshake'),
          }
        : null,
    };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(id, entry);
    return entry;
  }

  /** The shop of a cached endpoint (the request log; no store read). */
  shopOf(endpointId: string): string | undefined {
    return this.cache.get(endpointId)?.row.shop_id;
  }

  /** Forget cached endpoint facts (after a local config change). */
  invalidate(endpointId?: string): void {
    if (endpointId) this.cache.delete(endpointId);
    else this.cache.clear();
  }

  async handle(req: IntakeRequest): Promise<IntakeAck> {
    const now = this.services.now();
    const ep = this.fresh(req.endpointId, now) ?? (await this.lookup(req.endpointId, now));
    if (!ep) {
      this.rejected(UNKNOWN_ENDPOINT, 'not_found');
      throw new AppError('not_found', { detail: 'No endpoint with this id. Check the ingest URL.' });
    }
    let stage: Stage = 'state';
    let raw: Uint8Array | null = null;
    let mapped: Mapped | null = null;
    let handshake: { challenge: string | null } | null = null;
    let text: string;
    try {
      if (ep.row.status === 'archived')
        throw new AppError('endpoint_gone', {
          detail: 'This endpoint is archived and accepts no events; stop sending to it.',
        });
      if (ep.row.status === 'paused') throw new AppError('endpoint_paused', { retryAfterS: 60 });
      stage = 'size';
      raw = await req.readBody(this.services.config.intake.maxBodyBytes);
      stage = 'media';
      // A compressed body is refused, not inflated: the signature covers the bytes as sent, and
      // a bomb could inflate far past the size limit.
      const ce = req.headers.get('content-encoding');
      if (ce !== null && !IDENTITY_ENCODING_RE.test(ce)) {
        throw new AppError('unsupported_media_type', {
          detail: `Content-Encoding "${ce.slice(0, 40)}" is not accepted; send the JSON body uncompressed.`,
        });
      }
      // The same for a compression applied as a transfer coding (`gzip, chunked`): the HTTP
      // parser removes only the chunking.
      const te = req.headers.get('transfer-encoding');
      if (te !== null && !CHUNKED_ONLY_RE.test(te)) {
        throw new AppError('unsupported_media_type', {
          detail: `Transfer-Encoding "${te.slice(0, 40)}" is not accepted; send the JSON body uncompressed (chunked alone is fine).`,
        });
      }
      const ct = req.headers.get('content-type');
      if (ct !== null && ct !== 'application/json') {
        const [type = '', ...params] = ct.split(';');
        const media = type.trim().toLowerCase();
        if (!JSON_MEDIA_RE.test(media)) {
          throw new AppError('unsupported_media_type', {
            detail: `Content-Type "${media.slice(0, 80)}" is not JSON; send application/json.`,
          });
        }
        for (const p of params) {
          const [k, v = ''] = p.split('=');
          if (k?.trim().toLowerCase() === 'charset' && !/^"?utf-?8"?$/i.test(v.trim())) {
            throw new AppError('unsupported_media_type', { detail: 'Only UTF-8 JSON is accepted (charset=utf-8).' });
          }
        }
      }
      stage = 'auth';
      ep.secrets ??= preparedSecrets(this.services, ep);
      const secrets = ep.secrets.expiring
        ? ep.secrets.all.filter((s) => s.expiresAt === null || s.expiresAt > now).map((s) => s.secret)
        : ep.secrets.current;
      verifyRequest(ep.config, secrets, { headers: req.headers, raw, now });
      stage = 'validation';
      try {
        text = UTF8.decode(raw);
      } catch {
        throw new AppError('invalid_json', { detail: 'The body is not valid UTF-8.' });
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new AppError('invalid_json', { detail: 'The body is not valid JSON.' });
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new AppError('body_not_object');
      handshake = handshakeOf(ep.config.authMode, req.headers, body as Record<string, unknown>);
      if (handshake === null) mapped = mapBody(ep.config, req.headers, body as Record<string, unknown>, text);
      // Cheap bound first: escaping can at most 6x a byte, so small bodies always fit.
      if (mapped && raw.byteLength * 6 + 4096 > FLOW_PAYLOAD_LIMIT_BYTES) {
        const payload = buildFlowPayload(ep.config.triggerVariant, {
          id: 'evt_00000000000000000000000000',
          event_type: mapped.eventType,
          sender: ep.row.sender_label,
          external_event_id: mapped.externalEventId,
          received_at: now,
          body: text,
          resource_id: mapped.resourceId,
        });
        const size = Buffer.byteLength(JSON.stringify(payload));
        if (size > FLOW_PAYLOAD_LIMIT_BYTES) {
          throw new AppError('flow_payload_too_large', {
            detail: `The Flow payload for this event would be ${size} bytes; Shopify Flow accepts at most ${FLOW_PAYLOAD_LIMIT_BYTES}.`,
          });
        }
      }
    } catch (err) {
      if (err instanceof AppError) throw await this.reject(ep, err, stage, req, now, raw);
      throw err;
    }
    const hash = sha256Hex(raw);
    if (handshake !== null) return this.answerHandshake(ep, req, now, raw, hash, handshake.challenge);
    // What the event row's body column is bound to (see EVENT_PLACEHOLDERS).
    const bodyParam: SqlParam = this.services.db.dialect === 'sqlite' ? raw : text;
    // Set whenever this is no handshake (mapBody returned; it throws otherwise).
    const facts = mapped as Mapped;
    const windowHours = this.dedupeWindowHours(ep);
    const locks = facts.externalEventId && windowHours > 0 ? ep.locks.capAndDedupe : ep.locks.cap;
    let outcome: Awaited<ReturnType<Intake['acceptInTx']>>;
    const awaiting = facts.externalEventId && windowHours > 0 ? this.awaitDedupe(ep.row.id) : null;
    awaiting?.add(facts.externalEventId as string);
    try {
      outcome = await this.committer.submit(
        (tx, batch) => this.acceptInTx(tx, batch, ep, req, now, raw, hash, bodyParam, facts),
        { locks },
      );
    } catch (err) {
      // A full disk: nothing was stored or acknowledged; 503 store_full with Retry-After (the
      // sender retries), and a receipt where the store still takes one (a small row may fit).
      if (isStoreFull(err)) throw await this.reject(ep, storeFullError(), 'store', req, now, raw);
      throw err;
    } finally {
      if (awaiting) this.forgetDedupe(ep.row.id, awaiting, facts.externalEventId as string);
    }
    if (outcome.kind === 'cap') {
      this.rejected(ep.row.id, 'intake_event_cap_reached');
      throw new AppError('intake_event_cap_reached', {
        detail: `The shop's ${ep.plan.name} plan allows ${ep.plan.monthly.acceptedEvents + ep.plan.graceEvents} accepted events this month (including grace). Retry later; nothing was stored.`,
        retryAfterS: outcome.retryAfterS,
        extra: {
          support_code: INTAKE_SUPPORT_CODES.cap.code,
          ...(outcome.receiptId ? { receipt_id: outcome.receiptId } : {}),
        },
      });
    }
    (ep.cells?.[outcome.ack.status] ?? NO_CELL).n++;
    return outcome.ack;
  }

  /** Counts a refused request for /metrics (not the hot path: refusals also write a receipt). */
  private rejected(endpoint: string, code: string): void {
    const m = this.services.metrics;
    if (m) m.intakeCell(endpoint, 'rejected', code).n++;
  }

  /** Answers a verified handshake once its receipt is durable; stores no event. */
  private async answerHandshake(
    ep: CachedEndpoint,
    req: IntakeRequest,
    now: number,
    raw: Uint8Array,
    hash: string,
    challenge: string | null,
  ): Promise<IntakeAck> {
    const receiptId = newId('receipt');
    await this.committer.submit(async (_tx, batch) => {
      this.insertReceipt(batch, {
        id: receiptId,
        row: ep.row,
        eventId: null,
        requestId: req.requestId,
        now,
        auth: 'verified',
        validation: 'valid',
        dedupe: 'not_checked',
        httpStatus: ACK_HTTP_STATUS.handshake,
        errorCode: null,
        supportCode: INTAKE_SUPPORT_CODES.handshake.code,
        size: raw.byteLength,
        hash,
      });
    });
    return challenge === null
      ? { status: 'handshake', receipt_id: receiptId }
      : { status: 'handshake', receipt_id: receiptId, challenge };
  }

  private awaitDedupe(endpointId: string): Set<string> {
    let set = this.awaitingDedupe.get(endpointId);
    if (!set) {
      set = new Set();
      this.awaitingDedupe.set(endpointId, set);
    }
    return set;
  }

  private forgetDedupe(endpointId: string, set: Set<string>, ext: string): void {
    set.delete(ext);
    if (set.size === 0 && this.awaitingDedupe.get(endpointId) === set) this.awaitingDedupe.delete(endpointId);
  }

  /**
   * The first earlier copy of `ext` on this endpoint within the dedupe window, read in the batch's
   * transaction (the endpoint's dedupe lock is held). The first check of a batch reads every
   * external id awaiting a check on this endpoint in one query, and the batch's later checks use
   * that answer: on PostgreSQL a query per request was a round trip each, inside the one batch in
   * flight. An id the batch's query did not cover is read alone.
   */
  private async dedupeLookup(
    tx: Db,
    batch: Batch,
    endpointId: string,
    ext: string,
    since: number,
  ): Promise<string | undefined> {
    const key = `dedupe:${endpointId}`;
    let found = batch.scratch.get(key) as DedupeLookup | undefined;
    if (!found) {
      const ids = [ext];
      for (const other of this.awaitingDedupe.get(endpointId) ?? []) {
        if (ids.length >= DEDUPE_LOOKUP_MAX) break;
        if (other !== ext) ids.push(other);
      }
      // A minute of slack: requests of one batch were received moments apart; each is checked against its own window below.
      const from = since - 60_000;
      // PostgreSQL: one index probe per id (LATERAL), the plan of the single-id query; an IN list
      // there was planned as a range scan of the endpoint's whole window when the table's
      // statistics were young (measured: 19 ms against 0.03 ms). SQLite probes an IN list itself.
      const rows = await tx.all<{ ext: string; id: string; received_at: number }>(
        tx.dialect === 'postgres'
          ? `SELECT k.ext, e.id, e.received_at FROM unnest(?::text[]) AS k(ext)
               CROSS JOIN LATERAL (SELECT id, received_at FROM events
                 WHERE endpoint_id = ? AND external_event_id = k.ext AND received_at >= ?
                   AND duplicate_of IS NULL AND replay_of IS NULL ORDER BY received_at LIMIT 1) e`
          : `SELECT external_event_id AS ext, id, received_at FROM events
              WHERE external_event_id IN (${ids.map(() => '?').join(', ')}) AND endpoint_id = ? AND received_at >= ?
                AND duplicate_of IS NULL AND replay_of IS NULL`,
        tx.dialect === 'postgres' ? [pgArrayLiteral(ids), endpointId, from] : [...ids, endpointId, from],
      );
      const lookup: DedupeLookup = { from, covered: new Set(ids), rows: new Map() };
      for (const r of rows) {
        const list = lookup.rows.get(r.ext);
        if (list) list.push(r);
        else lookup.rows.set(r.ext, [r]);
      }
      found = lookup;
      batch.scratch.set(key, lookup);
    }
    if (found.covered.has(ext) && since >= found.from) {
      let first: { id: string; received_at: number } | undefined;
      for (const r of found.rows.get(ext) ?? [])
        if (r.received_at >= since && (!first || r.received_at < first.received_at)) first = r;
      return first?.id;
    }
    return (
      await tx.get<{ id: string }>(
        `SELECT id FROM events WHERE endpoint_id = ? AND external_event_id = ? AND received_at >= ?
            AND duplicate_of IS NULL AND replay_of IS NULL ORDER BY received_at LIMIT 1`,
        [endpointId, ext, since],
      )
    )?.id;
  }

  private dedupeWindowHours(ep: CachedEndpoint): number {
    return Math.min(ep.config.dedupeWindowHours ?? ep.plan.dedupeWindowHours, ep.plan.dedupeWindowHours);
  }

  private async acceptInTx(
    tx: Db,
    batch: Batch,
    ep: CachedEndpoint,
    req: IntakeRequest,
    now: number,
    raw: Uint8Array,
    hash: string,
    bodyParam: SqlParam,
    mapped: Mapped,
  ): Promise<{ kind: 'ack'; ack: IntakeAck } | { kind: 'cap'; retryAfterS: number; receiptId: string | null }> {
    const { row, plan } = ep;
    const eventId = newId('event');
    // The receipt of an accepted or duplicate request is derived from its event row (reads/receipts.ts).
    const receiptId = receiptIdForEvent(eventId);
    const ext = mapped.externalEventId;
    const windowHours = this.dedupeWindowHours(ep);
    const rows = batchRows(batch);
    const dedupeKey = ext && windowHours > 0 ? `${row.id}\u0000${ext}` : '';
    // What every event row of this request records, duplicate or not.
    const facts = {
      id: eventId,
      shop_id: row.shop_id,
      endpoint_id: row.id,
      receipt_id: receiptId,
      request_id: req.requestId,
      external_event_id: ext,
      event_type: mapped.eventType,
      sender: row.sender_label,
      body_size: raw.byteLength,
      body_sha256: hash,
      resource_id: mapped.resourceId,
      related_resource_id: mapped.relatedResourceId,
      config_version: row.config_version,
      received_at: now,
      updated_at: now,
    };
    if (ext && windowHours > 0) {
      // This endpoint's dedupe lock is held (committer), so no other batch writes a first copy meanwhile.
      const firstId =
        rows.firstByExternalId.get(dedupeKey) ??
        (await this.dedupeLookup(tx, batch, row.id, ext, now - windowHours * 3_600_000));
      if (firstId) {
        rows.events.push(
          eventRow({
            ...facts,
            state: 'duplicate_suppressed',
            support_code: INTAKE_SUPPORT_CODES.duplicate.code,
            body: null,
            next_attempt_at: null,
            body_expires_at: null,
            retention_state: 'not_retained',
            duplicate_of: firstId,
          }),
        );
        return {
          kind: 'ack',
          ack: { status: 'duplicate_suppressed', event_id: firstId, receipt_id: receiptId, duplicate_of: firstId },
        };
      }
    }
    // Plan cap: read the counter once per batch and shop, add this batch's accepts.
    const usageKey = ep.usageKey;
    let usage = batch.scratch.get(usageKey) as { count: number; added: number } | undefined;
    const period = usagePeriod(now);
    if (!usage) {
      const r = await tx.get<{ count: number }>(
        "SELECT count FROM usage_counters WHERE shop_id = ? AND period = ? AND meter = 'accepted_events'",
        [row.shop_id, period],
      );
      const u = { count: Number(r?.count ?? 0), added: 0 };
      usage = u;
      batch.scratch.set(usageKey, u);
      batch.beforeCommit(async (t) => {
        if (u.added === 0) return;
        await t.run(
          `INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, 'accepted_events', ?)
           ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = usage_counters.count + excluded.count`,
          [row.shop_id, period, u.added],
        );
      });
    }
    if (usage.count + usage.added >= plan.monthly.acceptedEvents + plan.graceEvents) {
      const retryAfterS = Math.min(secondsToNextPeriod(now), INTAKE_LIMITS.capRetryAfterMaxS);
      const rid = await this.recordRejectionInTx(tx, batch, row, {
        requestId: req.requestId,
        now,
        auth: 'verified',
        validation: 'valid',
        dedupe: ext ? 'unique' : 'no_external_id',
        errorCode: 'intake_event_cap_reached',
        size: raw.byteLength,
        hash,
      });
      return { kind: 'cap', retryAfterS, receiptId: rid };
    }
    usage.added++;
    const supportCode = INTAKE_SUPPORT_CODES.accepted.code;
    rows.events.push(
      eventRow({
        ...facts,
        state: 'queued',
        support_code: supportCode,
        body: bodyParam,
        next_attempt_at: now,
        body_expires_at: now + bodyRetentionMs(this.services.config, plan.id),
        retention_state: 'retained',
        duplicate_of: null,
      }),
    );
    if (ext && windowHours > 0) rows.firstByExternalId.set(dedupeKey, eventId);
    if (!batch.scratch.has('kick')) {
      batch.scratch.set('kick', true);
      batch.afterCommit(() => this.services.hooks.kickWorker?.());
    }
    return { kind: 'ack', ack: { status: 'queued', event_id: eventId, receipt_id: receiptId } };
  }

  /** Queues a receipt row; the batch writes it just before it commits. */
  private insertReceipt(
    batch: Batch,
    r: {
      id: string;
      row: EndpointRow;
      eventId: string | null;
      requestId: string;
      now: number;
      auth: string;
      validation: string;
      dedupe: string;
      httpStatus: number;
      errorCode: string | null;
      supportCode: string;
      size: number;
      hash: string | null;
    },
  ): void {
    batchRows(batch).receipts.push([
      r.id,
      r.row.shop_id,
      r.row.id,
      r.eventId,
      r.requestId,
      r.now,
      r.auth,
      r.validation,
      r.dedupe,
      r.row.config_version,
      r.httpStatus,
      r.errorCode,
      r.supportCode,
      r.size,
      r.hash,
    ]);
  }

  /** A receipt while the endpoint's per-minute budget lasts; afterwards one tally row per minute and code. */
  private async recordRejectionInTx(
    tx: Db,
    batch: Batch,
    row: EndpointRow,
    f: {
      requestId: string;
      now: number;
      auth: string;
      validation: string;
      dedupe: string;
      errorCode: string;
      size: number;
      hash: string | null;
    },
  ): Promise<string | null> {
    const minute = Math.floor(f.now / 60_000) * 60_000;
    let b = this.rejectionBudget.get(row.id);
    if (!b || b.minute !== minute) {
      b = { minute, used: 0 };
      if (this.rejectionBudget.size > 10_000) this.rejectionBudget.clear();
      this.rejectionBudget.set(row.id, b);
    }
    const supportCode = intakeSupportCode(f.errorCode);
    if (b.used < INTAKE_LIMITS.rejectionReceiptsPerMinute) {
      b.used++;
      const id = newId('receipt');
      const httpStatus = isErrorCode(f.errorCode) ? ERROR_CATALOG[f.errorCode].status : 500;
      this.insertReceipt(batch, {
        id,
        row,
        eventId: null,
        requestId: f.requestId,
        now: f.now,
        auth: f.auth,
        validation: f.validation,
        dedupe: f.dedupe,
        httpStatus,
        errorCode: f.errorCode,
        supportCode,
        size: f.size,
        hash: f.hash,
      });
      return id;
    }
    await tx.run(
      `INSERT INTO intake_rejection_tallies (endpoint_id, minute_start, error_code, shop_id, count) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (endpoint_id, minute_start, error_code) DO UPDATE SET count = intake_rejection_tallies.count + 1`,
      [row.id, minute, f.errorCode, row.shop_id],
    );
    return null;
  }

  /** Records the rejection (group-committed) and returns the error to throw, carrying receipt id and support code. */
  private async reject(
    ep: CachedEndpoint,
    err: AppError,
    stage: Stage,
    req: IntakeRequest,
    now: number,
    raw: Uint8Array | null,
  ): Promise<AppError> {
    const auth =
      stage === 'auth'
        ? err.code.endsWith('_missing')
          ? 'missing'
          : 'failed'
        : stage === 'validation' || stage === 'store'
          ? 'verified'
          : 'not_checked';
    // A body that never arrived whole (late, or its framing broke) was not checked; one refused for
    // its size or media was.
    const validation =
      stage === 'store'
        ? 'valid'
        : !BODY_NEVER_WHOLE.has(err.code) && (stage === 'validation' || stage === 'size' || stage === 'media')
          ? 'invalid'
          : 'not_checked';
    let receiptId: string | null;
    try {
      receiptId = await this.committer.submit((tx, batch) =>
        this.recordRejectionInTx(tx, batch, ep.row, {
          requestId: req.requestId,
          now,
          auth,
          validation,
          dedupe: 'not_checked',
          errorCode: err.code,
          size: raw?.byteLength ?? 0,
          hash: null,
        }),
      );
    } catch (writeErr) {
      // The store is full: the refusal is still answered, without a receipt.
      if (!isStoreFull(writeErr)) throw writeErr;
      receiptId = null;
    }
    this.rejected(ep.row.id, err.code);
    const extra: Record<string, unknown> = { ...err.options.extra, support_code: intakeSupportCode(err.code) };
    if (receiptId) extra.receipt_id = receiptId;
    return new AppError(err.code, { ...err.options, extra });
  }
}

/**
 * An event row's values in EVENT_COLUMNS order, written out: a keyed read per column name is a
 * megamorphic lookup V8 cannot inline, on every accepted request. tests/intake/event-row.test.ts
 * checks the order against EVENT_COLUMNS.
 */
export function eventRow(e: EventInsert): SqlParam[] {
  return [
    e.id,
    e.shop_id,
    e.endpoint_id,
    e.receipt_id,
    e.request_id,
    e.state,
    e.support_code,
    e.external_event_id,
    e.event_type,
    e.sender,
    e.body,
    e.body_size,
    e.body_sha256,
    e.resource_id,
    e.related_resource_id,
    e.config_version,
    e.received_at,
    e.updated_at,
    e.next_attempt_at,
    e.body_expires_at,
    e.retention_state,
    e.duplicate_of,
  ];
}

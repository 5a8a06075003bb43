// The intake pipeline for one endpoint request: state checks, size and media
// type, authentication on the raw bytes, JSON and mapping validation, then one
// group-committed write (dedupe, plan cap, event row, usage counter). An accepted
// or duplicate request's receipt is its event row (request id included; see
// reads/receipts.ts); a rejection gets a receipt row (no body), within a
// per-endpoint budget. A verified sender handshake (Slack's url_verification,
// GitHub's ping; AUTH_MODE_FACTS) is answered with a receipt row and no event.
// A batch's event and receipt rows are written with
// multi-row INSERTs just before its COMMIT (./batch.ts). Dedupe is decided by the
// store, a batch's external ids claimed in one upsert (./dedupe.ts, ADR 0314); the
// plan cap is a per-shop lock key. Both hold across API processes sharing Postgres.
// The body checks are in ./body-checks.ts; the SQL is on the store floor
// (store/tables/events/accept.ts, dedupe-keys.ts, receipts.ts, usage.ts).
import { type IntakeCell, UNKNOWN_ENDPOINT } from '../observability/metrics.ts';
import { ERROR_CATALOG, isErrorCode } from '../errors/catalog.ts';
import { isStoreFull, storeFullError } from '../store/full.ts';
import { AppError } from '../errors/problem.ts';
import { ACK_HTTP_STATUS, intakeSupportCode, INTAKE_SUPPORT_CODES } from '../errors/codes/intake.ts';
import { newId } from '../ids.ts';
import { findEndpointWithPlan } from '../reads/endpoints.ts';
import { receiptIdForEvent } from '../reads/receipts.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { bodyRetentionMs } from '../handoff/lifecycle.ts';
import type { Services } from '../core/types.ts';
import { planOf, type Plan } from '../plans.ts';
import { decryptedSecrets, endpointConfig, type EndpointConfig } from '../services/endpoints.ts';
import type { EndpointRow } from '../store/tables/endpoints.ts';
import type { Db, SqlParam } from '../store/db.ts';
import { eventRow } from '../store/tables/events/accept.ts';
import { tallyRejection } from '../store/tables/receipts.ts';
import { periodBounds } from '../usage/meters.ts';
import { type Batch, GroupCommitter } from '../store/committer.ts';
import { BODY_NEVER_WHOLE } from '../errors/codes/intake.ts';
import { INTAKE_LIMITS } from './limits.ts';
import { mapBody, type Mapped } from './mapping.ts';
import { type ExpiredSecret, verifyRequest, verifySecret, type VerifySecret } from './verify.ts';
import { type AuthFailure, AuthRefusal } from '../errors/auth-failure.ts';
import { handshakeOf } from './auth-modes.ts';
import { type BatchUsage, batchRows, queueReceipt, readBatchUsage } from './batch.ts';
import { checkFlowPayloadSize, checkMedia, decodeBody, parseJsonObject } from './body-checks.ts';
import { claimBatchKeys, claimsMade, type DedupeClaim, duplicateOf, firstCopyStored } from './dedupe.ts';

interface CachedEndpoint {
  row: EndpointRow;
  config: EndpointConfig;
  plan: Plan;
  fetchedAt: number;
  /** Decrypted and made into HMAC keys once per cache entry (both are hot-path costs). */
  secrets: PreparedSecrets | null;
  /** The lock keys of this endpoint's requests (intakeLocks), made once per cache entry. */
  locks: readonly string[];
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

/** The secrets whose rotation overlap has ended by `now` (kept on the row until the next rotation). */
function expiredSecrets(p: PreparedSecrets, now: number): ExpiredSecret[] {
  return p.all.flatMap((s) =>
    s.expiresAt !== null && s.expiresAt <= now ? [{ secret: s.secret, expiredAt: s.expiresAt }] : [],
  );
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

/** What an accepted request's part of its batch decided: its acknowledgement, or the plan cap's refusal. */
type AcceptOutcome = { kind: 'ack'; ack: IntakeAck } | { kind: 'cap'; retryAfterS: number; receiptId: string | null };

/** Where a request was refused; `store`: verified and valid, then the store could not take it. */
type Stage = 'state' | 'size' | 'media' | 'auth' | 'validation' | 'store';

/** Lock keys of intake's cross-process checks (see committer.ts). */
export const intakeLocks = {
  eventCap: (shopId: string) => `intake-event-cap:${shopId}`,
};

function secondsToNextPeriod(now: number): number {
  return Math.ceil((periodBounds(now).end - now) / 1000);
}

export class Intake {
  private readonly services: Services;
  /** Accepted requests note their dedupe claim (batch.notes; ./dedupe.ts). */
  readonly committer: GroupCommitter<DedupeClaim>;
  private readonly cache = new Map<string, CachedEndpoint>();
  private readonly rejectionBudget = new Map<string, { minute: number; used: number }>();
  private readonly cacheMs: number;

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
    const row = await findEndpointWithPlan(this.services.db, id);
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
      locks: [intakeLocks.eventCap(row.shop_id)],
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
      checkMedia(req.headers);
      stage = 'auth';
      ep.secrets ??= preparedSecrets(this.services, ep);
      const secrets = ep.secrets.expiring
        ? ep.secrets.all.filter((s) => s.expiresAt === null || s.expiresAt > now).map((s) => s.secret)
        : ep.secrets.current;
      // An expired previous secret verifies nothing; a refusal's failure.hint tries it (verify-hints.ts).
      const expired = ep.secrets.expiring ? expiredSecrets(ep.secrets, now) : undefined;
      verifyRequest(ep.config, secrets, { headers: req.headers, raw, now, expired });
      stage = 'validation';
      text = decodeBody(raw);
      const body = parseJsonObject(text);
      handshake = handshakeOf(ep.config.authMode, req.headers, body);
      if (handshake === null) mapped = mapBody(ep.config, req.headers, body, text);
      if (mapped) checkFlowPayloadSize(ep.config, ep.row.sender_label, mapped, raw, text, now);
    } catch (err) {
      if (err instanceof AppError) throw await this.reject(ep, err, stage, req, now, raw);
      throw err;
    }
    const hash = sha256Hex(raw);
    if (handshake !== null) return this.answerHandshake(ep, req, now, raw, hash, handshake.challenge);
    // Set whenever this is no handshake (mapBody returned; it throws otherwise). Awaited: an async
    // function returning a promise takes two more turns of the microtask queue to settle.
    return await this.accept(ep, req, now, raw, text, hash, mapped as Mapped);
  }

  /** Writes a verified, valid event (group-committed) and answers with its acknowledgement. */
  private async accept(
    ep: CachedEndpoint,
    req: IntakeRequest,
    now: number,
    raw: Uint8Array,
    text: string,
    hash: string,
    facts: Mapped,
  ): Promise<IntakeAck> {
    // What the event row's body column is bound to (see EVENT_PLACEHOLDERS in store/tables/events/accept.ts).
    const bodyParam: SqlParam = this.services.db.dialect === 'sqlite' ? raw : text;
    const eventId = newId('event');
    const windowHours = this.dedupeWindowHours(ep);
    const claim: DedupeClaim | null =
      facts.externalEventId && windowHours > 0
        ? {
            endpointId: ep.row.id,
            externalEventId: facts.externalEventId,
            shopId: ep.row.shop_id,
            eventId,
            receivedAt: now,
            windowMs: windowHours * 3_600_000,
          }
        : null;
    let outcome: AcceptOutcome;
    try {
      outcome = await this.committer.submit(
        (tx, batch) => this.acceptInTx(tx, batch, ep, req, now, raw, hash, bodyParam, facts, eventId, claim),
        claim ? { locks: ep.locks, note: claim } : { locks: ep.locks },
      );
    } catch (err) {
      // A full disk: nothing was stored or acknowledged; 503 store_full with Retry-After (the
      // sender retries), and a receipt where the store still takes one (a small row may fit).
      if (isStoreFull(err)) throw await this.reject(ep, storeFullError(), 'store', req, now, raw);
      throw err;
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
      queueReceipt(batch, {
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
        failure: null,
      });
    });
    return challenge === null
      ? { status: 'handshake', receipt_id: receiptId }
      : { status: 'handshake', receipt_id: receiptId, challenge };
  }

  private dedupeWindowHours(ep: CachedEndpoint): number {
    return Math.min(ep.config.dedupeWindowHours ?? ep.plan.dedupeWindowHours, ep.plan.dedupeWindowHours);
  }

  /**
   * An accepted request's part of its batch. Not async: the batch's first request waits for what
   * the batch reads once (its dedupe claims, the shop's usage) and runs again; every later one
   * reads them from the batch and returns its result without a promise or a turn of the loop.
   */
  private acceptInTx(
    tx: Db,
    batch: Batch<DedupeClaim>,
    ep: CachedEndpoint,
    req: IntakeRequest,
    now: number,
    raw: Uint8Array,
    hash: string,
    bodyParam: SqlParam,
    mapped: Mapped,
    eventId: string,
    claim: DedupeClaim | null,
  ): AcceptOutcome | Promise<AcceptOutcome> {
    // First, as before any wait: the batch's rows are written before its dedupe keys are settled.
    const rows = batchRows(batch);
    // The store decides dedupe for the whole batch at its first request (./dedupe.ts): no lock, no
    // look-up of earlier copies. Nothing is written before a wait, so running again repeats nothing.
    if (claim && !claimsMade(batch))
      return claimBatchKeys(tx, batch).then(() =>
        this.acceptInTx(tx, batch, ep, req, now, raw, hash, bodyParam, mapped, eventId, claim),
      );
    const { row, plan } = ep;
    // The receipt of an accepted or duplicate request is derived from its event row (reads/receipts.ts).
    const receiptId = receiptIdForEvent(eventId);
    const ext = mapped.externalEventId;
    // What every event row of this request records, duplicate or not, and what differs.
    const rowOf = (
      state: string,
      supportCode: string,
      body: SqlParam,
      nextAttemptAt: number | null,
      bodyExpiresAt: number | null,
      retention: string,
      duplicateOf: string | null,
    ) =>
      eventRow({
        id: eventId,
        shop_id: row.shop_id,
        endpoint_id: row.id,
        receipt_id: receiptId,
        request_id: req.requestId,
        state,
        support_code: supportCode,
        external_event_id: ext,
        event_type: mapped.eventType,
        sender: row.sender_label,
        body,
        body_size: raw.byteLength,
        body_sha256: hash,
        resource_id: mapped.resourceId,
        related_resource_id: mapped.relatedResourceId,
        config_version: row.config_version,
        received_at: now,
        updated_at: now,
        next_attempt_at: nextAttemptAt,
        body_expires_at: bodyExpiresAt,
        retention_state: retention,
        duplicate_of: duplicateOf,
      });
    if (claim) {
      const firstId = duplicateOf(batch, claim);
      if (firstId) {
        rows.events.push(
          rowOf('duplicate_suppressed', INTAKE_SUPPORT_CODES.duplicate.code, null, null, null, 'not_retained', firstId),
        );
        return {
          kind: 'ack',
          ack: { status: 'duplicate_suppressed', event_id: firstId, receipt_id: receiptId, duplicate_of: firstId },
        };
      }
    }
    // Plan cap: the counter is read once per batch and shop (by its first request that is no
    // duplicate, which then runs again), and this batch's accepts are added to it.
    const usage = batch.scratch.get(ep.usageKey) as BatchUsage | undefined;
    if (!usage)
      return readBatchUsage(tx, batch, ep.usageKey, row.shop_id, now).then(() =>
        this.acceptInTx(tx, batch, ep, req, now, raw, hash, bodyParam, mapped, eventId, claim),
      );
    if (usage.count + usage.added >= plan.monthly.acceptedEvents + plan.graceEvents)
      return this.capReached(tx, batch, row, req, now, raw, hash, ext);
    usage.added++;
    rows.events.push(
      rowOf(
        'queued',
        INTAKE_SUPPORT_CODES.accepted.code,
        bodyParam,
        now,
        now + bodyRetentionMs(this.services.config, plan.id),
        'retained',
        null,
      ),
    );
    if (claim) firstCopyStored(batch, claim);
    if (!batch.scratch.has('kick')) {
      batch.scratch.set('kick', true);
      batch.afterCommit(() => this.services.hooks.kickWorker?.());
    }
    return { kind: 'ack', ack: { status: 'queued', event_id: eventId, receipt_id: receiptId } };
  }

  /** The shop's monthly event cap is reached: the refusal's receipt (or tally), and when to retry. */
  private async capReached(
    tx: Db,
    batch: Batch,
    row: EndpointRow,
    req: IntakeRequest,
    now: number,
    raw: Uint8Array,
    hash: string,
    ext: string | null,
  ): Promise<{ kind: 'cap'; retryAfterS: number; receiptId: string | null }> {
    const retryAfterS = Math.min(secondsToNextPeriod(now), INTAKE_LIMITS.capRetryAfterMaxS);
    const receiptId = await this.recordRejectionInTx(tx, batch, row, {
      requestId: req.requestId,
      now,
      auth: 'verified',
      validation: 'valid',
      dedupe: ext ? 'unique' : 'no_external_id',
      errorCode: 'intake_event_cap_reached',
      size: raw.byteLength,
      hash,
      failure: null,
    });
    return { kind: 'cap', retryAfterS, receiptId };
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
      failure: AuthFailure | null;
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
      queueReceipt(batch, {
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
        failure: f.failure ? JSON.stringify(f.failure) : null,
      });
      return id;
    }
    await tallyRejection(tx, row.id, minute, f.errorCode, row.shop_id);
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
          // Worked out here, on the refusal path only: the hash of a body that was read, the check that failed.
          hash: raw === null ? null : sha256Hex(raw),
          failure: err instanceof AuthRefusal ? err.failure : null,
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

// The action intent engine: every side effect is preview → confirm → executed |
// failed (or refused, expired, cancelled). One engine for all kinds; a kind only
// inspects its target and executes. Every step is audited with its actor.
import { type AuditEntry, appendAudit } from '../audit/log.ts';
import { type Action, ACTIONS, executeScope, previewScope } from '../auth/scopes.ts';
import { errorDef } from '../errors/catalog.ts';
import { AppError } from '../errors/problem.ts';
import { newId } from '../ids.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { AGENT_API_PREFIX } from '../lib/package-info.ts';
import type { OperationContext, Principal, Services } from '../core/types.ts';
import { getShop } from '../services/shops.ts';
import type { ShopRow } from '../store/tables/shops.ts';
import { findIntentWithActors, type IntentRowWithActors } from '../reads/action-intents.ts';
import type { Db } from '../store/db.ts';
import { lockEndpointForChange } from '../store/tables/endpoints.ts';
import { findEventEndpointId } from '../store/tables/events/intents.ts';
import {
  cancelPendingBulkReplayItems,
  findShopIntent,
  insertPreviewedIntent,
  markIntentCancelled,
  markIntentConfirmed,
  markIntentExecuted,
  markIntentExpired,
  markIntentFailed,
  markIntentRefused,
  setIntentResult,
} from '../store/tables/intents.ts';
import {
  claimKey,
  completeKey,
  completeKeyWithRefusal,
  releaseKey,
  replayStored,
  requestHash,
  validateIdempotencyKey,
} from './idempotency.ts';
import { type BulkReplayProgress, bulkReplayProgress } from './bulk-replay-progress.ts';
import { INTENT_KINDS } from './kinds/index.ts';
import { releaseIntentClaims } from './replay-claims.ts';
import { assertExecutionAvailable, consumeExecution } from './usage.ts';
import {
  type CapUse,
  costStated,
  type IntentCost,
  type IntentKind,
  type IntentKindDef,
  type IntentRow,
  type IntentState,
  type KindContext,
  type PreviewBody,
} from './types.ts';

/** Every execute scope: one of them (the intent kind's) is needed to confirm. */
const INTENT_SCOPES_EXECUTE: readonly string[] = ACTIONS.map(executeScope);

export interface StoredPreview {
  preview: PreviewBody;
  fingerprint_hash: string;
  cap: CapUse | null;
  /** The kind's statement of the cost (absent on previews stored before it was kept). */
  cost?: IntentCost;
}

/** Who calls the engine; `audited` is marked when the engine audits the call (the guard then does not). */
export type Caller = Pick<OperationContext, 'services' | 'principal' | 'requestId' | 'audited'>;

function kindDef(kind: IntentKind): IntentKindDef {
  return INTENT_KINDS[kind] as IntentKindDef;
}

function fingerprintHash(fp: unknown): string {
  return sha256Hex(JSON.stringify(fp ?? null));
}

async function shopOf(services: Services, principal: Principal): Promise<ShopRow> {
  const shop = await getShop(services, principal.shopId);
  if (!shop) throw new AppError('not_found', { detail: 'The shop behind this grant no longer exists.' });
  return shop;
}

function actorOf(principal: Principal): AuditEntry['actor'] {
  return { grantId: principal.grantId, kind: principal.actor.kind, name: principal.actor.name };
}

async function audit(
  db: Db,
  caller: Caller,
  intent: { id: string | null; kind: IntentKind; targetType?: string; targetId?: string | null },
  step: 'preview' | 'confirm' | 'execute' | 'cancel',
  outcome: 'success' | 'refused' | 'failed',
  details: Record<string, unknown> = {},
): Promise<void> {
  if (caller.audited) caller.audited.done = true;
  await appendAudit(db, {
    shopId: caller.principal.shopId,
    actor: actorOf(caller.principal),
    action: `${intent.kind}.${step}`,
    targetType: 'action_intent',
    targetId: intent.id,
    outcome,
    requestId: caller.requestId,
    at: caller.services.now(),
    details: {
      kind: intent.kind,
      target_type: intent.targetType ?? null,
      target_id: intent.targetId ?? null,
      ...details,
    },
  });
}

function kc(caller: Caller, db: Db, shop: ShopRow): KindContext {
  return {
    services: caller.services,
    db,
    shop,
    principal: caller.principal,
    requestId: caller.requestId,
    now: caller.services.now(),
  };
}

// ---------- views ----------

const iso = (ms: number | string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export function effectiveState(row: Pick<IntentRow, 'state' | 'expires_at'>, now: number): IntentState {
  return row.state === 'previewed' && Number(row.expires_at) <= now ? 'expired' : row.state;
}

const NEXT_STEP: Record<IntentState, string> = {
  previewed:
    'Review the preview. To run it, POST the confirm link with an Idempotency-Key header using a grant that holds required_scope; to drop it, POST the cancel link.',
  confirmed: 'The action is running; read this intent again for the outcome.',
  executed: 'Done. See result for what changed.',
  failed: 'Execution failed; see error_code. Nothing was half-applied. Create a fresh preview to try again.',
  refused:
    'Refused at confirmation; see error_code and its docs page. Create a fresh preview if the action is still wanted.',
  expired: 'The preview expired before confirmation. Create a fresh preview.',
  cancelled: 'Cancelled; nothing ran.',
};

/** Kinds whose execution hands new events to Flow: done means created, not yet accepted by Flow. */
const EXECUTED_NEXT_STEP: Partial<Record<Action, string>> = {
  replay:
    "Done: the replay event was created (result.event_id) and Flowport's worker hands it to Flow; read that event for when Flow accepted it (state delivered).",
  test_event:
    "Done: the test event was created (result.event_id) and Flowport's worker hands it to Flow; read that event for when Flow accepted it (state delivered).",
  bulk_replay:
    "Done: every event was handled and the replays were created; Flowport's worker hands them to Flow. progress.replays_by_state counts those Flow accepted (delivered), and the items' replay_state says it event by event.",
};

/** Parameters as shown: an imported secret is stored sealed and shown only as its last 4 characters. */
function publicParams(params: Record<string, unknown>): Record<string, unknown> {
  const { secret_sealed: sealed, url_sealed: urlSealed, ...rest } = params;
  const shown = sealed === undefined ? rest : { ...rest, secret: 'imported (sealed; not shown)' };
  // An alert subscription's URL (a Slack URL is a credential): only its origin is shown.
  return urlSealed === undefined ? shown : { ...shown, url: `${String(rest.url_origin ?? '')}/… (sealed; not shown)` };
}

export function intentView(row: IntentRowWithActors, now: number, once?: Record<string, unknown>) {
  const stored = JSON.parse(row.preview_json) as StoredPreview;
  const state = effectiveState(row, now);
  const self = `${AGENT_API_PREFIX}/action-intents/${row.id}`;
  const result = row.result_json ? (JSON.parse(row.result_json) as Record<string, unknown>) : null;
  const cost = costStated(stored.cost, stored.cap);
  return {
    id: row.id,
    object: 'action_intent' as const,
    kind: row.kind,
    state,
    target: { type: row.target_type, id: row.target_id },
    parameters: publicParams(JSON.parse(row.params_json) as Record<string, unknown>),
    preview: stored.preview,
    meter_cost: {
      preview: 1,
      execution: cost.execution,
      replays: cost.replays ?? 0,
      diagnostics_shares: cost.diagnostics_shares ?? 0,
      cap: stored.cap
        ? {
            meter: stored.cap.meter,
            cost: cost[stored.cap.meter] ?? 1,
            used_at_preview: stored.cap.used,
            limit: stored.cap.limit,
          }
        : null,
    },
    preview_scope: previewScope(row.kind),
    required_scope: executeScope(row.kind),
    created_at: iso(row.created_at) as string,
    expires_at: iso(row.expires_at) as string,
    created_by: row.created_by_grant
      ? { grant_id: row.created_by_grant, actor_kind: row.created_by_kind, actor_name: row.created_by_name }
      : null,
    confirmed_by: row.confirmed_by_grant
      ? { grant_id: row.confirmed_by_grant, actor_kind: row.confirmed_by_kind, actor_name: row.confirmed_by_name }
      : null,
    confirmed_at: iso(row.confirmed_at),
    finished_at: iso(row.finished_at),
    result: result || once ? { ...(result ?? {}), ...(once ?? {}) } : null,
    error_code: row.error_code,
    links: { self, confirm: `${self}/confirm`, cancel: `${self}/cancel` },
    next_step: (state === 'executed' ? EXECUTED_NEXT_STEP[row.kind as Action] : undefined) ?? NEXT_STEP[state],
  };
}

export type IntentView = ReturnType<typeof intentView> & { progress?: BulkReplayProgress };

/** The view, with a bulk replay's progress (counts by item status) read from the store. */
async function fullView(
  db: Db,
  row: IntentRowWithActors,
  now: number,
  once?: Record<string, unknown>,
): Promise<IntentView> {
  const view: IntentView = intentView(row, now, once);
  if (row.kind === 'bulk_replay') view.progress = await bulkReplayProgress(db, row.id);
  return view;
}

async function loadIntent(db: Db, shopId: string, intentId: string): Promise<IntentRowWithActors> {
  const row = await findIntentWithActors(db, shopId, intentId);
  // Other shops' intents answer 404 like missing ones, so ids are never confirmed.
  if (!row) throw new AppError('not_found', { detail: `No action intent ${intentId} in this shop.` });
  return row;
}

// ---------- preview ----------

export async function previewIntent(
  caller: Caller,
  kind: IntentKind,
  targetId: string | null,
  params: Record<string, unknown>,
  lifetimeMs: number = caller.services.config.intents.previewTtlMs,
): Promise<IntentView> {
  const { services, principal } = caller;
  const def = kindDef(kind);
  const shop = await shopOf(services, principal);
  let inspection: Awaited<ReturnType<IntentKindDef['inspect']>>;
  try {
    const ctx = { ...kc(caller, services.db, shop), previewLifetimeMs: lifetimeMs };
    inspection = await def.inspect(ctx, targetId, params);
    // A preview that could never be confirmed this month is refused now, naming the cap.
    await assertExecutionAvailable(services.db, shop.id, services.now());
  } catch (err) {
    if (err instanceof AppError) {
      await audit(services.db, caller, { id: null, kind, targetId, targetType: undefined }, 'preview', 'refused', {
        code: err.code,
        layer: errorDef(err.code).layer ?? null,
      });
    }
    throw err;
  }
  const now = services.now();
  const id = newId('intent', now);
  const stored: StoredPreview = {
    preview: inspection.preview,
    fingerprint_hash: fingerprintHash(inspection.fingerprint),
    cap: inspection.cap ?? null,
    cost: costStated(inspection.cost, inspection.cap ?? null),
  };
  const paramsJson = JSON.stringify(params);
  await services.db.tx(async (tx) => {
    await insertPreviewedIntent(tx, {
      id,
      shopId: shop.id,
      kind,
      targetType: inspection.targetType,
      targetId: inspection.targetId,
      paramsJson,
      paramsHash: sha256Hex(paramsJson),
      previewJson: JSON.stringify(stored),
      createdByGrant: principal.grantId,
      now,
      expiresAt: now + lifetimeMs,
    });
    await audit(
      tx,
      caller,
      { id, kind, targetType: inspection.targetType, targetId: inspection.targetId },
      'preview',
      'success',
      // The caller's stated reason (a replay's `note`) belongs with the attribution.
      typeof params.note === 'string' ? { note: params.note } : {},
    );
  });
  return intentView(await loadIntent(services.db, shop.id, id), services.now());
}

// ---------- read ----------

export async function getIntent({ ctx, input }: { ctx: Caller; input: { intent_id: string } }): Promise<IntentView> {
  const row = await loadIntent(ctx.services.db, ctx.principal.shopId, input.intent_id);
  return fullView(ctx.services.db, row, ctx.services.now());
}

// ---------- confirm ----------

const REFUSAL_MARKS_INTENT = new Set(['target_state', 'safety', 'product_boundary']);

/**
 * Confirms and executes an intent exactly once. The idempotency key is a plain
 * argument: HTTP passes the `Idempotency-Key` header, MCP its tool input.
 * Returns the response object; a replayed response is the stored JSON text parsed
 * back, so serializing it again yields the same bytes.
 */
export async function confirmIntent({
  ctx: caller,
  input,
}: {
  ctx: Caller;
  input: { intent_id: string; idempotency_key: string | undefined | null };
}): Promise<unknown> {
  const { services, principal } = caller;
  const { intent_id: intentId, idempotency_key: idempotencyKey } = input;
  const key = validateIdempotencyKey(idempotencyKey);
  if (!principal.scopes.some((s) => s.endsWith(':execute'))) {
    throw new AppError('missing_scope', {
      detail:
        'Confirming an action intent needs the execute scope of its kind (for example `replay:execute`); this grant holds no execute scope.',
      reason: 'The grant holds no <action>:execute scope.',
      // Which one depends on the intent's kind, not looked up for a grant that can execute nothing.
      anyOfScopes: INTENT_SCOPES_EXECUTE,
    });
  }
  const row = await loadIntent(services.db, principal.shopId, intentId);
  const required = executeScope(row.kind);
  if (!principal.scopes.includes(required)) {
    await audit(
      services.db,
      caller,
      { id: row.id, kind: row.kind, targetType: row.target_type, targetId: row.target_id },
      'confirm',
      'refused',
      {
        code: 'missing_scope',
        required_scope: required,
      },
    );
    throw new AppError('missing_scope', {
      detail: `Confirming this ${row.kind} intent needs the \`${required}\` scope; this grant can preview but not execute it. Ask a human (or a grant that holds ${required}) to confirm ${row.id}.`,
      reason: `The grant does not include the ${required} scope.`,
      requiredScope: required,
      extra: { intent_id: row.id },
    });
  }
  // The key is this grant's own: another grant's key of the same value is a different claim.
  const scope = { shopId: principal.shopId, grantId: principal.grantId, operationId: 'confirmActionIntent' };
  const claim = await claimKey(services, scope, key, requestHash(['confirm', intentId]));
  if (claim.kind === 'replay') return replayStored(claim);
  try {
    const out = await runConfirmation(caller, row);
    const body = JSON.stringify(out);
    await completeKey(services, scope, key, 200, body);
    return JSON.parse(body);
  } catch (err) {
    const state = await loadIntent(services.db, principal.shopId, intentId).then(
      (r) => r.state,
      () => null,
    );
    const settled = err instanceof AppError && state !== null && state !== 'previewed';
    // The intent can never be confirmed now (refused, expired, already executed…): retries with
    // this key get this same refusal. Otherwise (a cap, a crash) nothing ran and the intent is
    // still previewed: forget the claim so the caller can fix the cause and retry with the key.
    if (settled) await completeKeyWithRefusal(services, scope, key, err);
    else await releaseKey(services, scope, key);
    throw err;
  }
}

type Outcome =
  | { kind: 'executed'; once?: Record<string, unknown>; after?: () => void }
  | { kind: 'expired' }
  | { kind: 'not_confirmable'; state: IntentState }
  | { kind: 'stale' };

type IntentRef = { id: string; kind: IntentKind; targetType: string; targetId: string | null };

/**
 * Concurrent confirmations on one endpoint take turns from here (ADR 0411): the endpoint an intent
 * targets, or the endpoint of the event a replay targets, is locked before the target is re-read.
 */
async function lockTargetEndpoint(tx: Db, intent: IntentRow): Promise<void> {
  if (!intent.target_id) return;
  const endpointId =
    intent.target_type === 'endpoint'
      ? intent.target_id
      : intent.target_type === 'event'
        ? await findEventEndpointId(tx, intent.target_id)
        : undefined;
  if (endpointId) await lockEndpointForChange(tx, endpointId);
}

/** The confirmation's one transaction: re-check the target, claim the intent, execute, meter. */
async function confirmInTx(
  caller: Caller,
  tx: Db,
  shop: ShopRow,
  initial: IntentRow,
  ref: IntentRef,
): Promise<Outcome> {
  const { services, principal } = caller;
  const def = kindDef(initial.kind);
  const params = JSON.parse(initial.params_json) as Record<string, unknown>;
  await lockTargetEndpoint(tx, initial);
  const now = services.now();
  const row = await findShopIntent<IntentRow>(tx, shop.id, initial.id);
  if (!row) throw new AppError('not_found', { detail: `No action intent ${initial.id} in this shop.` });
  // Expired whether or not an earlier confirmation already recorded it: the same refusal every time.
  if (effectiveState(row, now) === 'expired') return { kind: 'expired' };
  if (row.state !== 'previewed') return { kind: 'not_confirmable', state: row.state };
  const ctx = { ...kc(caller, tx, shop), confirming: true };
  const inspection = await def.inspect(ctx, row.target_id, params);
  const stored = JSON.parse(row.preview_json) as StoredPreview;
  if (fingerprintHash(inspection.fingerprint) !== stored.fingerprint_hash) return { kind: 'stale' };
  if (!(await markIntentConfirmed(tx, row.id, { grantId: principal.grantId, requestId: caller.requestId }, now)))
    return { kind: 'not_confirmable', state: 'confirmed' };
  await audit(tx, caller, ref, 'confirm', 'success');
  const exec = await def.execute(ctx, row, params);
  await consumeExecution(tx, shop.id, inspection.cap?.meter ?? null, now);
  if (exec.background) {
    // Runs on in the background (bulk replay): confirmed until its runner finishes it.
    await setIntentResult(tx, row.id, JSON.stringify(exec.result));
    return { kind: 'executed', once: exec.once, after: exec.after };
  }
  await markIntentExecuted(tx, row.id, services.now(), JSON.stringify(exec.result));
  await audit(tx, caller, ref, 'execute', 'success', { result: exec.result });
  return { kind: 'executed', once: exec.once, after: exec.after };
}

/** Records and throws the refusal an outcome other than `executed` stands for. */
async function refuseOutcome(
  caller: Caller,
  initial: IntentRow,
  ref: IntentRef,
  outcome: Exclude<Outcome, { kind: 'executed' }>,
): Promise<never> {
  const { services } = caller;
  if (outcome.kind === 'expired') {
    await markIntentExpired(services.db, initial.id);
    await audit(services.db, caller, ref, 'confirm', 'refused', { code: 'intent_expired', layer: 'target_state' });
    throw new AppError('intent_expired', {
      detail: `Intent ${initial.id} expired at ${iso(initial.expires_at)} before it was confirmed. Create a fresh preview.`,
      reason: 'The preview expired.',
      extra: { intent_id: initial.id },
    });
  }
  if (outcome.kind === 'not_confirmable') {
    await audit(services.db, caller, ref, 'confirm', 'refused', {
      code: 'intent_not_confirmable',
      state: outcome.state,
    });
    throw new AppError('intent_not_confirmable', {
      detail: `Intent ${initial.id} is ${outcome.state}; only a previewed intent can be confirmed. It runs at most once.`,
      reason: `The intent is ${outcome.state}.`,
      extra: { intent_id: initial.id, intent_state: outcome.state },
    });
  }
  // Stale: the target changed since the preview.
  await markIntentRefused(services.db, initial.id, 'intent_stale', services.now());
  await audit(services.db, caller, ref, 'confirm', 'refused', { code: 'intent_stale', layer: 'target_state' });
  throw new AppError('intent_stale', {
    detail: `The target of ${initial.id} changed after the preview (configuration, state or another action). Create a fresh preview and review it.`,
    reason: 'The target changed since the preview.',
    extra: { intent_id: initial.id },
  });
}

async function runConfirmation(caller: Caller, initial: IntentRow): Promise<IntentView> {
  const { services, principal } = caller;
  const shop = await shopOf(services, principal);
  const ref = { id: initial.id, kind: initial.kind, targetType: initial.target_type, targetId: initial.target_id };
  let outcome: Outcome;
  try {
    outcome = await services.db.tx((tx) => confirmInTx(caller, tx, shop, initial, ref));
  } catch (err) {
    if (err instanceof AppError) {
      const layer = errorDef(err.code).layer;
      if (layer && REFUSAL_MARKS_INTENT.has(layer))
        await markIntentRefused(services.db, initial.id, err.code, services.now());
      await audit(services.db, caller, ref, 'confirm', 'refused', { code: err.code, layer: layer ?? null });
      throw err;
    }
    // An unexpected failure inside execution: the transaction rolled back, so nothing was half-applied.
    await services.db.tx(async (tx) => {
      await markIntentFailed(tx, initial.id, principal.grantId, services.now());
      await audit(tx, caller, ref, 'execute', 'failed', { code: 'internal_error' });
    });
    if (services.config.logLevel !== 'silent') console.error(`[${caller.requestId}] intent ${initial.id} failed:`, err);
    return intentView(await loadIntent(services.db, shop.id, initial.id), services.now());
  }
  if (outcome.kind !== 'executed') return refuseOutcome(caller, initial, ref, outcome);
  if (initial.target_type === 'endpoint' && initial.target_id) services.hooks.endpointChanged?.(initial.target_id);
  outcome.after?.();
  return fullView(services.db, await loadIntent(services.db, shop.id, initial.id), services.now(), outcome.once);
}

// ---------- cancel ----------

export async function cancelIntent({
  ctx: caller,
  input,
}: {
  ctx: Caller;
  input: { intent_id: string };
}): Promise<IntentView> {
  const { services, principal } = caller;
  const intentId = input.intent_id;
  const row = await loadIntent(services.db, principal.shopId, intentId);
  const ref = { id: row.id, kind: row.kind, targetType: row.target_type, targetId: row.target_id };
  const allowed = [previewScope(row.kind), executeScope(row.kind)];
  if (!allowed.some((s) => principal.scopes.includes(s))) {
    await audit(services.db, caller, ref, 'cancel', 'refused', { code: 'missing_scope' });
    throw new AppError('missing_scope', {
      detail: `Cancelling a ${row.kind} intent needs \`${allowed[0]}\` or \`${allowed[1]}\`.`,
      reason: `The grant holds neither ${allowed[0]} nor ${allowed[1]}.`,
      requiredScope: allowed[0],
    });
  }
  const now = services.now();
  const state = effectiveState(row, now);
  // An expired intent is refused as confirming it is (intent_expired), so one situation has one code.
  if (state === 'expired') {
    await audit(services.db, caller, ref, 'cancel', 'refused', { code: 'intent_expired', state });
    throw new AppError('intent_expired', {
      detail: `Intent ${row.id} expired at ${new Date(Number(row.expires_at)).toISOString()}; there is nothing left to cancel.`,
      extra: { intent_id: row.id, intent_state: state },
    });
  }
  if (state === 'confirmed' && row.kind === 'bulk_replay') {
    // A running bulk replay stops: its pending items are cancelled in the same transaction, so
    // the runner (which replays an item only while it is pending) makes no replay after this.
    const stopped = await services.db.tx(async (tx) => {
      if (!(await markIntentCancelled(tx, row.id, 'confirmed', now))) return false;
      await cancelPendingBulkReplayItems(tx, row.id, now);
      // The events it will not replay are free for another replay at once (ADR 0410).
      await releaseIntentClaims(tx, row.id);
      await audit(tx, caller, ref, 'cancel', 'success', { progress: await bulkReplayProgress(tx, row.id) });
      return true;
    });
    if (stopped) return fullView(services.db, await loadIntent(services.db, principal.shopId, row.id), services.now());
  }
  if (state !== 'previewed') {
    await audit(services.db, caller, ref, 'cancel', 'refused', { code: 'intent_not_confirmable', state });
    throw new AppError('intent_not_confirmable', {
      detail: `Intent ${row.id} is ${state}; only a previewed intent can be cancelled.`,
      reason: `The intent is ${state}.`,
      extra: { intent_id: row.id, intent_state: state },
    });
  }
  const changed = await services.db.tx(async (tx) => {
    const done = await markIntentCancelled(tx, row.id, 'previewed', now);
    if (done) await audit(tx, caller, ref, 'cancel', 'success');
    return done;
  });
  if (!changed) {
    throw new AppError('intent_not_confirmable', {
      detail: `Intent ${row.id} changed state while cancelling.`,
      extra: { intent_id: row.id },
    });
  }
  return intentView(await loadIntent(services.db, principal.shopId, row.id), services.now());
}

// What a Flow response means for the event: the outcome mapping, the support
// codes, the lifecycle states and the retry schedule — as data, so the worker,
// the reads and the docs all render the same table.
import { type Config, loadConfig } from '../config.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import type { FlowCallResult } from './flow-client.ts';

/**
 * Event lifecycle states (API values). `held`: waiting until the shop can take deliveries again.
 * A request intake refuses never becomes an event: it is a receipt (`auth_result`, `error_code`).
 */
export const EVENT_STATES = [
  'accepted',
  'queued',
  'delivering',
  'held',
  'delivered',
  'no_workflow',
  'failed',
  'duplicate_suppressed',
] as const;
export type EventState = (typeof EVENT_STATES)[number];

/**
 * Shop states in which Shopify refuses every call for the store itself (not the token, not the
 * event): the shop's events are held, and one of them is sent as a probe every
 * shopProbeIntervalMs until Shopify accepts a call again (ADR 0201). Keyed by
 * `shops.connection_status`; `outcome` is what attempts Shopify refused this way record.
 */
export const UNAVAILABLE_SHOP = {
  frozen: { httpStatus: 402, outcome: 'shop_frozen' },
  locked: { httpStatus: 423, outcome: 'shop_locked' },
  // Also when the Flow call itself is denied the GraphQL way (HTTP 200, no data, ACCESS_DENIED).
  access_denied: { httpStatus: 403, graphqlCode: 'ACCESS_DENIED', outcome: 'shop_access_denied' },
  not_found: { httpStatus: 404, outcome: 'shop_not_found' },
} as const satisfies Record<string, { httpStatus: number; graphqlCode?: string; outcome: string }>;
export type UnavailableShopStatus = keyof typeof UNAVAILABLE_SHOP;
export const UNAVAILABLE_SHOP_STATUSES = Object.keys(UNAVAILABLE_SHOP) as UnavailableShopStatus[];
type RefusedStoreOutcome = (typeof UNAVAILABLE_SHOP)[UnavailableShopStatus]['outcome'];
/** Attempt outcomes that do not use the retry budget (Shopify refused the store, not the event). */
export const HELD_ATTEMPT_OUTCOMES: readonly RefusedStoreOutcome[] = UNAVAILABLE_SHOP_STATUSES.map(
  (s) => UNAVAILABLE_SHOP[s].outcome,
);

/** The table in words for descriptions: "402 frozen, 423 locked, … or 404 not_found" (`quote` marks each status). */
export function unavailableShopsInWords(quote: (status: string) => string = (s) => s): string {
  const each = UNAVAILABLE_SHOP_STATUSES.map((s) => `${UNAVAILABLE_SHOP[s].httpStatus} ${quote(s)}`);
  return `${each.slice(0, -1).join(', ')} or ${each.at(-1)}`;
}

export const TERMINAL_STATES: readonly EventState[] = ['delivered', 'no_workflow', 'failed', 'duplicate_suppressed'];

/**
 * The terminal states as the store's partial indexes spell them (migrations 0700, 0810, 1600):
 * they also name `rejected`, a state no event takes (refused requests are receipts). Statements
 * that must match those index predicates use this exact list.
 */
export const STORED_TERMINAL_STATES: readonly string[] = [...TERMINAL_STATES, 'rejected'];

export const EVENT_STATE_DESCRIPTIONS: Record<EventState, string> = {
  accepted: 'Intake verified and stored the event; it is about to be queued.',
  queued: 'Waiting for its first or next delivery attempt (see next_attempt_at).',
  delivering: 'A worker holds a lease on it and is calling Shopify Flow now.',
  held: `The shop cannot take deliveries now: disconnected (its Shopify token was refused; the event waits until the shop reconnects), or Shopify refuses the store itself (${unavailableShopsInWords()}; Flowport sends one held event now and then as a probe and releases the rest once Shopify accepts it). Held events use no retries and are delivered once when the hold ends; one still held when its body expires (the event read's handoff.hold.release_by) ends failed with FP-H-HEXP, kept as a record. See support_code.`,
  delivered: 'Shopify Flow accepted the trigger. This does not mean a workflow ran its actions.',
  no_workflow:
    "No workflow took the trigger: Flow answered that the trigger handle is unknown (support code FP-H-NOWF), or Flow's trigger lifecycle callback said no enabled workflow uses it and Flowport did not call Shopify (FP-H-NOFL). See support_code.",
  failed: 'Delivery stopped: a non-retryable answer, a revoked token, or the last retry failed. See error_code.',
  duplicate_suppressed: 'Same external event id within the dedupe window; links to the first event. Not delivered.',
};

/** Attempt outcomes, as stored in attempts.outcome (the store refusals from UNAVAILABLE_SHOP). */
export const ATTEMPT_OUTCOMES = [
  'in_progress',
  'delivered',
  'no_workflow',
  'rejected',
  'too_large',
  'token_revoked',
  'throttled',
  'upstream_error',
  'timeout',
  'connection_error',
  'abandoned',
  'held',
  ...HELD_ATTEMPT_OUTCOMES,
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export interface SupportCodeDef {
  code: string;
  /** The state the event is in when it carries this code. */
  state: EventState;
  errorCode: ErrorCode | null;
  meaning: string;
}

/** Short stable support codes for handoff outcomes: quote one to support and it says where delivery stopped. */
export const SUPPORT_CODES = {
  delivered: { code: 'FP-H-OK', state: 'delivered', errorCode: null, meaning: 'Flow accepted the trigger.' },
  no_workflow: {
    code: 'FP-H-NOWF',
    state: 'no_workflow',
    errorCode: 'flow_trigger_not_found',
    meaning: 'Flow does not know the trigger handle.',
  },
  too_large: {
    code: 'FP-H-SIZE',
    state: 'failed',
    errorCode: 'flow_payload_too_large',
    meaning: 'Payload over 50,000 bytes; not retried.',
  },
  rejected: {
    code: 'FP-H-REJ',
    state: 'failed',
    errorCode: 'flow_payload_rejected',
    meaning: 'Flow refused the payload; not retried.',
  },
  token_revoked: {
    code: 'FP-H-AUTH',
    state: 'held',
    errorCode: 'shopify_token_revoked',
    meaning: 'Shopify refused the token on this event; shop disconnected, event held until it reconnects.',
  },
  held: {
    code: 'FP-H-HELD',
    state: 'held',
    errorCode: 'shop_disconnected',
    meaning: 'Held until the shop reconnects.',
  },
  uninstalled: {
    code: 'FP-H-UNIN',
    state: 'held',
    errorCode: 'shop_uninstalled',
    meaning: 'The app was uninstalled from the store; held until it is reinstalled.',
  },
  expired_while_held: {
    code: 'FP-H-HEXP',
    state: 'failed',
    errorCode: 'event_expired_while_held',
    meaning:
      "Held until its body expired (the shop could not take deliveries before the plan's retention ended); body purged, not delivered, kept as a record.",
  },
  workflow_disabled: {
    code: 'FP-H-NOFL',
    state: 'no_workflow',
    errorCode: 'flow_workflow_disabled',
    meaning: "Flow's lifecycle callback says no enabled workflow uses the trigger; Shopify was not called.",
  },
  frozen: {
    code: 'FP-H-FRZN',
    state: 'held',
    errorCode: 'shop_frozen',
    meaning:
      'Shopify answered 402: the store is frozen (unpaid Shopify bill); held and probed until the store is available.',
  },
  locked: {
    code: 'FP-H-LOCK',
    state: 'held',
    errorCode: 'shop_locked',
    meaning: 'Shopify answered 423: the store is locked by Shopify; held and probed until the store is available.',
  },
  access_denied: {
    code: 'FP-H-DENY',
    state: 'held',
    errorCode: 'shop_access_denied',
    meaning:
      'Shopify answered 403: the app has no access to the store (access revoked, scopes changed, or the store flagged); held and probed until the store is available.',
  },
  not_found: {
    code: 'FP-H-GONE',
    state: 'held',
    errorCode: 'shop_not_found',
    meaning:
      'Shopify answered 404: the store was not found (closed, deleted, or a wrong domain); held and probed until the store is available.',
  },
  throttled: {
    code: 'FP-H-THR',
    state: 'queued',
    errorCode: 'flow_throttled',
    meaning: 'Throttled by Shopify; retry scheduled.',
  },
  upstream_error: {
    code: 'FP-H-5XX',
    state: 'queued',
    errorCode: 'flow_upstream_error',
    meaning: 'Shopify 5xx or another unexpected or unreadable answer; retry scheduled.',
  },
  timeout: {
    code: 'FP-H-TIME',
    state: 'queued',
    errorCode: 'flow_timeout',
    meaning: 'Timed out; retry scheduled (possible duplicate).',
  },
  connection_error: {
    code: 'FP-H-CONN',
    state: 'queued',
    errorCode: 'flow_connection_error',
    meaning: 'Connection failed; retry scheduled.',
  },
  erased: {
    code: 'FP-H-ERAS',
    state: 'failed',
    errorCode: 'event_erased',
    meaning: 'Body erased by a Shopify privacy webhook before delivery; not delivered.',
  },
  exhausted: {
    code: 'FP-H-EXH',
    state: 'failed',
    errorCode: 'flow_retries_exhausted',
    meaning: 'Retry schedule used up; failed.',
  },
} as const satisfies Record<string, SupportCodeDef>;
export type SupportCodeKey = keyof typeof SUPPORT_CODES;

/**
 * How an event reached no_workflow, by its support code: what happened (the event's
 * state_description) and what to do next (the rest of its handoff explanation). Both reads take
 * their words from here, so they cannot disagree.
 */
export const NO_WORKFLOW_CAUSES: Record<string, { happened: string; next: string }> = {
  [SUPPORT_CODES.workflow_disabled.code]: {
    happened:
      "Shopify Flow's trigger lifecycle callback said no enabled workflow uses this trigger in the store, so Flowport did not call Shopify.",
    next: "The last attempt's local_check names the time of Flow's signal. Turn on a workflow, then recover the whole window at once: a bulk replay with no_workflow_since (and no_workflow_until; left out, the window ends when Flow said a workflow uses the trigger again) replays every event that ended no_workflow in it and leaves out those already recovered. GET /agent/v1/events?state=no_workflow&recovered=false lists what is left.",
  },
  [SUPPORT_CODES.no_workflow.code]: {
    happened:
      'Shopify Flow answered that the trigger handle is unknown: no deployed trigger extension or workflow for it.',
    next: 'Deploy the trigger extension and enable a workflow that starts with it, then replay.',
  },
};

/** One event's state in plain words and what to do next, from its state and support code. */
export function eventStateInWords(
  state: string,
  supportCode: string | null,
): { description: string; next: string | null } {
  const cause = state === 'no_workflow' && supportCode ? NO_WORKFLOW_CAUSES[supportCode] : undefined;
  if (cause) return { description: cause.happened, next: cause.next };
  return { description: EVENT_STATE_DESCRIPTIONS[state as EventState] ?? state, next: null };
}

/** How the events of a shop Shopify refuses (UNAVAILABLE_SHOP) are released. */
const PROBED_RELEASE =
  'Events are held; Flowport probes the store now and then and releases them once Shopify accepts a call.';

/**
 * Why a shop's events are held, by `shops.connection_status`: the support code (and so the error
 * code) held events carry, the recovery action, and the sentences reads (event explanation,
 * readiness) show.
 */
export const SHOP_HOLDS = {
  disconnected: {
    support: 'held',
    errorCode: SUPPORT_CODES.held.errorCode,
    action: 'reconnect_shop',
    why: 'Shopify refused the stored access token (app uninstalled or token revoked)',
    release: 'Events are held until a human reconnects the app.',
    recovery: 'A human reconnects the Shopify app (new access token); held events are released automatically.',
  },
  uninstalled: {
    support: 'uninstalled',
    errorCode: SUPPORT_CODES.uninstalled.errorCode,
    action: 'reinstall_app',
    why: 'The merchant uninstalled the Flowport app from the store (Shopify sent app/uninstalled); its access token was deleted',
    release: 'Events are held until the app is reinstalled.',
    recovery:
      'The merchant reinstalls the Flowport app (/shopify/install); the install releases the held events still within retention automatically.',
  },
  frozen: {
    support: 'frozen',
    errorCode: SUPPORT_CODES.frozen.errorCode,
    action: 'pay_shopify_bill',
    why: 'Shopify answers 402 Payment Required for this store, which is frozen (usually an unpaid Shopify bill)',
    release: PROBED_RELEASE,
    recovery:
      'The store owner pays the outstanding Shopify balance; the next probe finds the store available and held events are released automatically.',
  },
  locked: {
    support: 'locked',
    errorCode: SUPPORT_CODES.locked.errorCode,
    action: 'contact_shopify_support',
    why: 'Shopify answers 423 Locked for this store, which Shopify has locked',
    release: PROBED_RELEASE,
    recovery:
      'The store owner asks Shopify Support to unlock the store; the next probe finds it available and held events are released automatically.',
  },
  access_denied: {
    support: 'access_denied',
    errorCode: SUPPORT_CODES.access_denied.errorCode,
    action: 'reapprove_app_access',
    why: 'Shopify answers 403 Forbidden for this store, or denies the Flow call with ACCESS_DENIED: the app no longer has access to it (its access was revoked or its scopes changed, or Shopify flagged the store)',
    release: PROBED_RELEASE,
    recovery:
      "The store owner re-approves the app's access in the Shopify admin, or reinstalls the app; the next probe finds access restored and held events are released automatically.",
  },
  not_found: {
    support: 'not_found',
    errorCode: SUPPORT_CODES.not_found.errorCode,
    action: 'check_shop_domain',
    why: "Shopify answers 404 Not Found for this store: the store was closed or deleted, or the shop's domain or Admin API URL is wrong",
    release: PROBED_RELEASE,
    recovery:
      "Check the shop's domain and whether the store is still open. If the store reopens, the next probe finds it and held events are released automatically; if it was closed for good, archive its endpoints so senders stop sending. After a wrong Admin API URL is fixed, `npx flowport shops reconnect` releases the events at once.",
  },
} as const satisfies Record<
  string,
  { support: SupportCodeKey; errorCode: ErrorCode; action: string; why: string; release: string; recovery: string }
>;
export type ShopHold = (typeof SHOP_HOLDS)[keyof typeof SHOP_HOLDS];

/** Why the shop's events are held, or null when it is connected. */
export function shopHoldFor(connectionStatus: string): ShopHold | null {
  return Object.hasOwn(SHOP_HOLDS, connectionStatus) ? SHOP_HOLDS[connectionStatus as keyof typeof SHOP_HOLDS] : null;
}

/** The hold a held event's error code stands for (a token revoked on the event itself waits for the reconnect too). */
export function shopHoldOf(errorCode: string | null): ShopHold {
  return Object.values(SHOP_HOLDS).find((h) => h.errorCode === errorCode) ?? SHOP_HOLDS.disconnected;
}

export function isUnavailableShop(status: string): status is UnavailableShopStatus {
  return Object.hasOwn(UNAVAILABLE_SHOP, status);
}

export interface RetryPolicy {
  /** Cap of the first retry's delay window. */
  baseMs: number;
  /** No delay window grows past this. */
  capMs: number;
  /** Attempts in total, the first included; after the last the event fails. */
  maxAttempts: number;
}

export function retryPolicyOf(worker: Config['worker']): RetryPolicy {
  return { baseMs: worker.retryBaseMs, capMs: worker.retryCapMs, maxAttempts: Math.max(1, worker.maxAttempts) };
}

/** The default schedule (defaults live in config.ts): 8 attempts, windows 5 s, 10 s, 20 s … capped at 10 min. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = retryPolicyOf(loadConfig({}).worker);

/** Upper bound of the delay before attempt `attempt + 1` (attempt is 1-based, the one that just failed). */
export function retryWindowMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1));
}

/** Exponential backoff with full jitter: uniform in [0, window]. */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  return Math.floor(random() * retryWindowMs(policy, attempt));
}

/** The schedule as rows, for docs and the manifest: after attempt n, wait 0…maxDelayMs. */
export function retrySchedule(
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): { afterAttempt: number; maxDelayMs: number }[] {
  return Array.from({ length: policy.maxAttempts - 1 }, (_, i) => ({
    afterAttempt: i + 1,
    maxDelayMs: retryWindowMs(policy, i + 1),
  }));
}

export type Classified =
  | { kind: 'final'; outcome: AttemptOutcome; support: SupportCodeKey }
  | { kind: 'revoked'; outcome: 'token_revoked'; support: 'token_revoked' }
  | { kind: 'unavailable'; status: UnavailableShopStatus; outcome: AttemptOutcome; support: SupportCodeKey }
  | {
      kind: 'retry';
      outcome: AttemptOutcome;
      support: SupportCodeKey;
      notBeforeMs: number;
      /** The call may have reached Flow (no answer says so): counts as a possible duplicate delivery. */
      maybeRan?: boolean;
    };

const INVALID_HANDLE = /Invalid handle/;
const TOO_LARGE = /Properties size exceeds/;

/** Maps one Flow call result to what happens to the event. */
export function classifyFlowResult(r: FlowCallResult): Classified {
  const maybeRan = r.mayHaveReachedShopify;
  if (r.transportError === 'timeout')
    return { kind: 'retry', outcome: 'timeout', support: 'timeout', notBeforeMs: 0, maybeRan };
  if (r.transportError)
    return { kind: 'retry', outcome: 'connection_error', support: 'connection_error', notBeforeMs: 0, maybeRan };
  if (r.httpStatus === 401) return { kind: 'revoked', outcome: 'token_revoked', support: 'token_revoked' };
  for (const status of UNAVAILABLE_SHOP_STATUSES) {
    const u: { httpStatus: number; graphqlCode?: string; outcome: AttemptOutcome } = UNAVAILABLE_SHOP[status];
    const refusedInGraphql = u.graphqlCode !== undefined && !r.hasData && r.errorCodes.includes(u.graphqlCode);
    if (r.httpStatus === u.httpStatus || refusedInGraphql)
      return { kind: 'unavailable', status, outcome: u.outcome, support: SHOP_HOLDS[status].support };
  }
  if (r.throttled) return { kind: 'retry', outcome: 'throttled', support: 'throttled', notBeforeMs: r.throttleWaitMs };
  if (r.httpStatus === null || r.httpStatus >= 500 || r.httpStatus !== 200 || !r.hasData) {
    return { kind: 'retry', outcome: 'upstream_error', support: 'upstream_error', notBeforeMs: r.retryAfterMs };
  }
  if (r.userErrors.length === 0) return { kind: 'final', outcome: 'delivered', support: 'delivered' };
  if (r.userErrors.some((e) => TOO_LARGE.test(e.message)))
    return { kind: 'final', outcome: 'too_large', support: 'too_large' };
  if (r.userErrors.some((e) => INVALID_HANDLE.test(e.message)))
    return { kind: 'final', outcome: 'no_workflow', support: 'no_workflow' };
  return { kind: 'final', outcome: 'rejected', support: 'rejected' };
}

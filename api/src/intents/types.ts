// Types shared by the intent engine and its kinds. A kind knows how to inspect
// its target (refusals + preview + a fingerprint of the facts the preview relied
// on) and how to execute inside the confirmation transaction.
import type { Action } from '../auth/scopes.ts';
import type { Principal, Services } from '../core/types.ts';
import type { ShopRow } from '../store/tables/shops.ts';
import type { Db } from '../store/db.ts';

export type IntentKind = Action;

export const INTENT_STATES = [
  'previewed',
  'confirmed',
  'executed',
  'failed',
  'refused',
  'expired',
  'cancelled',
] as const;
export type IntentState = (typeof INTENT_STATES)[number];

export type TargetType = 'event' | 'endpoint' | 'shop' | 'alert_subscription';

export interface IntentRow {
  id: string;
  shop_id: string;
  kind: IntentKind;
  state: IntentState;
  target_type: TargetType;
  target_id: string | null;
  params_json: string;
  params_hash: string;
  preview_json: string;
  created_by_grant: string | null;
  created_at: number;
  expires_at: number;
  confirmed_by_grant: string | null;
  confirmed_at: number | null;
  finished_at: number | null;
  result_json: string | null;
  error_code: string | null;
}

/** What the engine gives a kind: a store handle (maybe a transaction), the shop and the caller. */
export interface KindContext {
  services: Services;
  db: Db;
  shop: ShopRow;
  principal: Principal;
  requestId: string;
  now: number;
  /** True while a confirmation re-inspects the target (false or absent for a preview). */
  confirming?: boolean;
  /** How long the preview being made stays confirmable (absent while confirming). */
  previewLifetimeMs?: number;
}

export interface CapUse {
  meter: 'replays' | 'diagnostics_shares';
  used: number;
  limit: number;
}

export interface PreviewBody {
  /** One sentence: what will happen. */
  summary: string;
  /** The target as it is now. */
  target: Record<string, unknown>;
  /** Current configuration relevant to the action (null when none applies). */
  current_config: Record<string, unknown> | null;
  /** What confirming will change, in order. */
  effects: string[];
  warnings: string[];
  /** Kind-specific detail (diffs, counts, payloads, inclusion lists). */
  details: Record<string, unknown>;
}

/**
 * What an action counts against the monthly plan once confirmed, stated once by its kind and shown
 * as the intent's meter_cost (and by a bulk replay's details.meter). A kind that states none costs
 * its confirmation's one execution (DEFAULT_COST).
 */
export interface IntentCost {
  /** Executions: the confirmation's one, and one per replay a bulk replay makes. */
  execution: number;
  /** Replays counted against the plan's monthly replay cap. */
  replays?: number;
  /** Diagnostics shares counted against their monthly cap. */
  diagnostics_shares?: number;
}

export const DEFAULT_COST: IntentCost = { execution: 1 };

/** The cost a kind stated; for a preview stored before costs were kept, its confirmation's. */
export function costStated(cost: IntentCost | undefined, cap: CapUse | null): IntentCost {
  if (cost) return cost;
  return cap ? { ...DEFAULT_COST, [cap.meter]: 1 } : DEFAULT_COST;
}

export interface Inspection {
  targetType: TargetType;
  targetId: string | null;
  /** Facts that must be unchanged at confirmation (compared by hash). */
  fingerprint: unknown;
  preview: PreviewBody;
  /** The plan cap the confirmation itself counts one unit against, if any. */
  cap?: CapUse;
  /** What the action costs in all (DEFAULT_COST when absent). */
  cost?: IntentCost;
}

export interface Execution {
  /** Safe to store and show on every read of the intent. */
  result: Record<string, unknown>;
  /** Shown once, in the confirmation response only (new secrets, share links). */
  once?: Record<string, unknown>;
  /** Runs after the transaction commits (e.g. wake the worker). */
  after?: () => void;
  /**
   * The effect continues in the background (bulk replay): the intent stays `confirmed` until its
   * runner finishes it (`executed`) or it is cancelled.
   */
  background?: boolean;
}

export interface IntentKindDef<P = Record<string, unknown>> {
  kind: IntentKind;
  /** Human label, e.g. "event replay". */
  label: string;
  /** Validates target and parameters, throws refusals, and builds the preview. */
  inspect(kc: KindContext, targetId: string | null, params: P): Promise<Inspection>;
  /** Performs the effect. Runs inside the confirmation transaction (kc.db is the transaction). */
  execute(kc: KindContext, intent: IntentRow, params: P): Promise<Execution>;
}

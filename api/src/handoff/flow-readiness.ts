// Flow readiness (ADR 1200): whether an enabled Shopify Flow workflow uses a trigger in a store,
// as Flow's trigger lifecycle callback last said (the route is api/src/shopify/flow-lifecycle.ts).
// The newest signal per shop domain and trigger handle wins; the worker skips the call to Shopify
// for a trigger no enabled workflow uses; setup, diagnostics, receipts and the merchant page show it.
import { newId } from '../ids.ts';
import type { Db } from '../store/db.ts';
import {
  findLifecycleSignal,
  findLifecycleSignalAt,
  findLifecycleSignalsAt,
  listLifecycleSignals,
  upsertLifecycleSignal,
} from '../store/tables/shops.ts';
import { loadTriggerDefinitions } from './triggers.ts';

export interface FlowLifecycleSignal {
  shopDomain: string;
  handle: string;
  hasEnabledFlow: boolean;
  /** The callback's own timestamp (ms); the newest one wins. */
  signalAt: number;
}

export type FlowReadiness = { enabled: 'yes' | 'no'; since: number } | { enabled: 'unknown'; since: null };

/** Stores a signal unless a newer one for the same shop and trigger is stored. Returns whether it was applied. */
export async function recordLifecycleSignal(db: Db, s: FlowLifecycleSignal, now: number): Promise<boolean> {
  const changes = await upsertLifecycleSignal(db, { ...s, id: newId('lifecycleSignal', now), now });
  callCache.delete(cacheKey(s.shopDomain, s.handle));
  return changes > 0;
}

/** Whether an enabled workflow uses the trigger in this shop, per Flow's newest signal. */
export async function flowReadiness(db: Db, shopDomain: string, handle: string): Promise<FlowReadiness> {
  const row = await findLifecycleSignal(db, shopDomain, handle);
  if (!row) return { enabled: 'unknown', since: null };
  return { enabled: Number(row.has_enabled_flow) === 1 ? 'yes' : 'no', since: Number(row.signal_at) };
}

/**
 * What the trigger's readiness was at `at` (e.g. when a request was received), from the lifecycle
 * history: the newest signal Flowport had received by then. Nothing is recorded at intake for it.
 */
export async function flowReadinessAt(db: Db, shopDomain: string, handle: string, at: number): Promise<FlowReadiness> {
  const row = await findLifecycleSignalAt(db, shopDomain, handle, at);
  if (!row) return { enabled: 'unknown', since: null };
  return { enabled: Number(row.has_enabled_flow) === 1 ? 'yes' : 'no', since: Number(row.signal_at) };
}

/** flowReadinessAt for several times in one read (by time). */
export async function flowReadinessesAt(
  db: Db,
  shopDomain: string,
  handle: string,
  ats: readonly number[],
): Promise<Map<number, FlowReadiness>> {
  const rows = await findLifecycleSignalsAt(db, shopDomain, handle, ats);
  return new Map(
    ats.map((at) => {
      const row = rows.get(at);
      const r: FlowReadiness = row
        ? { enabled: Number(row.has_enabled_flow) === 1 ? 'yes' : 'no', since: Number(row.signal_at) }
        : { enabled: 'unknown', since: null };
      return [at, r];
    }),
  );
}

/**
 * How long the worker trusts a readiness it read that lets it call Shopify (`yes`, `unknown`).
 * A `no` is never cached: ending an event `no_workflow` always rests on the stored row, so a
 * workflow turned on (in any process) is never missed; a stale `yes` at worst makes one call Flow
 * would not have needed, as before lifecycle callbacks existed. This process's own callbacks drop
 * the entry at once.
 */
const CALL_READINESS_TTL_MS = 1_000;
const callCache = new Map<string, { value: FlowReadiness; at: number }>();
const cacheKey = (shopDomain: string, handle: string) => `${shopDomain}\n${handle}`;

/** flowReadiness for the delivery path: the same answer, without a read per delivery while Flow says call. */
export async function readinessForDelivery(db: Db, shopDomain: string, handle: string): Promise<FlowReadiness> {
  const key = cacheKey(shopDomain, handle);
  const hit = callCache.get(key);
  const now = Date.now();
  if (hit && now - hit.at < CALL_READINESS_TTL_MS) return hit.value;
  const value = await flowReadiness(db, shopDomain, handle);
  if (value.enabled === 'no') callCache.delete(key);
  else {
    if (callCache.size > 10_000) callCache.clear();
    callCache.set(key, { value, at: now });
  }
  return value;
}

/** Every trigger's readiness in a shop, by handle (handles without a signal are absent). */
export async function flowReadinessByHandle(db: Db, shopDomain: string): Promise<Map<string, FlowReadiness>> {
  const rows = await listLifecycleSignals(db, shopDomain);
  return new Map(
    rows.map((r) => [
      r.trigger_handle,
      { enabled: Number(r.has_enabled_flow) === 1 ? 'yes' : 'no', since: Number(r.signal_at) } as FlowReadiness,
    ]),
  );
}

/** The triggers Flow has not reported on yet, in one sentence (a page lists them once, not per row). */
export function describeUnknownReadiness(handles: readonly string[]): string {
  const names =
    handles.length > 1 ? `${handles.slice(0, -1).join(', ')} or ${handles[handles.length - 1]}` : (handles[0] ?? '');
  return `Flow has not said yet whether an enabled workflow uses ${names} (no lifecycle callback): Flowport calls Shopify for every event.`;
}

/**
 * A sentence for one trigger's readiness (setup, diagnostics, receipts, the merchant page); `dateText` writes when Flow said it (ISO 8601 unless a page reads better).
 */
export function describeReadiness(
  handle: string,
  r: FlowReadiness,
  dateText: (ms: number) => string = (ms) => new Date(ms).toISOString(),
): string {
  if (r.enabled === 'unknown') return describeUnknownReadiness([handle]);
  const since = dateText(r.since);
  return r.enabled === 'yes'
    ? `An enabled workflow uses ${handle} (Flow said so at ${since}).`
    : `No enabled workflow uses ${handle} (Flow said so at ${since}): its events end no_workflow without a call to Shopify. Turn on a workflow, then replay them.`;
}

/**
 * The trigger handle a callback's flow_trigger_definition_id names. Shopify documents it as "the
 * unique identifier for your Flow trigger" with a trigger's name as the example ("Add row to
 * spreadsheet"), so both the extension's handle and its name are accepted (ADR 1200); anything
 * else is kept as sent (it then matches no trigger Flowport calls).
 */
export function triggerHandleOf(definitionId: string): string {
  const defs = loadTriggerDefinitions();
  const id = definitionId.trim();
  return (
    defs.find((d) => d.handle === id)?.handle ??
    defs.find((d) => d.name.toLowerCase() === id.toLowerCase())?.handle ??
    id
  );
}

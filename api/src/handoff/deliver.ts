// Delivering one claimed event: the Flow call (flowTriggerReceive), or the answer Flow would give
// without calling it (a payload it would refuse, a trigger no enabled workflow uses).
import type { Services } from '../core/types.ts';
import type { ShopRow } from '../store/tables/shops.ts';
import type { ClaimedEvent } from './claim.ts';
import { callFlowTriggerReceive, type FlowCallResult, graphqlUrl } from './flow-client.ts';
import { readinessForDelivery } from './flow-readiness.ts';
import { type Classified, classifyFlowResult } from './outcomes.ts';
import {
  buildFlowPayload,
  FLOW_PAYLOAD_LIMIT_BYTES,
  PayloadBuildError,
  payloadBytes,
  TRIGGER_HANDLES,
} from './payload.ts';
import { withFreshToken } from './shop-tokens.ts';

/** What a delivery needs of its worker. */
export interface DeliverHost {
  readonly services: Services;
  /** Resolves the Admin API base URL for a shop (sandbox shops point at the stand-in). */
  adminBaseUrl(shop: ShopRow): string;
  /** Paces the shop by the answer (pace.ts), before the outcome is recorded. */
  pace(ev: ClaimedEvent, result: FlowCallResult, classified: Classified): Promise<void>;
  record(
    ev: ClaimedEvent,
    c: Classified,
    result: FlowCallResult | null,
    local: Record<string, unknown> | null,
  ): Promise<void>;
}

/** Delivers one claimed event and records its outcome. */
export async function deliverEvent(host: DeliverHost, ev: ClaimedEvent): Promise<void> {
  const { db, secrets, config } = host.services;
  const shop = ev.shop;
  let payload: Record<string, unknown>;
  try {
    payload = buildFlowPayload(ev.trigger_variant, ev);
  } catch (err) {
    if (!(err instanceof PayloadBuildError)) throw err;
    return host.record(ev, { kind: 'final', outcome: 'rejected', support: 'rejected' }, null, {
      local_check: err.message,
    });
  }
  const size = payloadBytes(payload);
  if (size > FLOW_PAYLOAD_LIMIT_BYTES) {
    // Flow would refuse it (and charge a call); answer as Flow does without calling.
    return host.record(ev, { kind: 'final', outcome: 'too_large', support: 'too_large' }, null, {
      local_check: `payload is ${size} bytes; Flow accepts at most ${FLOW_PAYLOAD_LIMIT_BYTES}`,
    });
  }
  // Flow said no enabled workflow uses this trigger in this store: calling would start nothing
  // and cost a point. "Unknown" (no callback yet) still calls (ADR 1200).
  const handle = TRIGGER_HANDLES[ev.trigger_variant];
  const readiness = await readinessForDelivery(db, shop.domain, handle);
  if (readiness.enabled === 'no') {
    return host.record(ev, { kind: 'final', outcome: 'no_workflow', support: 'workflow_disabled' }, null, {
      local_check: `Flow's trigger lifecycle callback at ${new Date(readiness.since).toISOString()} said no enabled workflow uses ${handle} in ${shop.domain}; Shopify was not called.`,
      flow_signal_at: new Date(readiness.since).toISOString(),
    });
  }
  const current = await withFreshToken(host.services, shop);
  let token = current.access_token_enc ? secrets.decrypt(current.access_token_enc) : '';
  const result = await callFlowTriggerReceive({
    url: graphqlUrl(host.adminBaseUrl(shop), config.shopify.apiVersion),
    accessToken: token,
    handle,
    payload,
    timeoutMs: config.worker.requestTimeoutMs,
  });
  token = '';
  const classified = classifyFlowResult(result);
  await host.pace(ev, result, classified);
  return host.record(ev, classified, result, null);
}

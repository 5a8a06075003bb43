// Builds the Flow trigger payload for an event from its endpoint's trigger
// variant. The fields come from the extension definitions (./triggers.ts); this
// file only says where each field's value comes from.
import { TRIGGER_VARIANTS, type TriggerVariant } from '../store/tables/endpoints.ts';
import type { LeasedEvent } from '../store/tables/events/deliver.ts';
import { handleForVariant, triggerDefinition } from './triggers.ts';

/** Flow trigger handles per variant (derived from the definitions' naming rule). */
export const TRIGGER_HANDLES: Record<TriggerVariant, string> = Object.fromEntries(
  TRIGGER_VARIANTS.map((v) => [v, handleForVariant(v)]),
) as Record<TriggerVariant, string>;

/** Flow rejects payloads whose compact JSON is larger than this (exactly this many bytes passes). */
export const FLOW_PAYLOAD_LIMIT_BYTES = 50_000;

/** What a payload is built from: these columns of an event (as the worker's lease reads them). */
export type PayloadSource = Pick<
  LeasedEvent,
  'id' | 'event_type' | 'sender' | 'external_event_id' | 'received_at' | 'body' | 'resource_id'
>;

/** Where each custom (non-reference) field's value comes from, by field key. */
export const FIELD_SOURCES: Record<string, (ev: PayloadSource) => string> = {
  'Event type': (ev) => ev.event_type ?? 'unknown',
  Source: (ev) => ev.sender ?? '',
  'External event id': (ev) => ev.external_event_id ?? ev.id,
  'Flowport event id': (ev) => ev.id,
  'Received at': (ev) => new Date(Number(ev.received_at)).toISOString(),
  Body: (ev) => ev.body ?? '',
};

/** Numeric resource id from a numeric id or a GID (`gid://shopify/Order/123`); null when neither. */
export function numericResourceId(raw: string | null): number | null {
  if (raw === null) return null;
  const m = /^(?:gid:\/\/shopify\/[A-Za-z]+\/)?(\d{1,19})$/.exec(raw.trim());
  if (!m?.[1]) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : null;
}

export class PayloadBuildError extends Error {}

export function buildFlowPayload(variant: TriggerVariant, ev: PayloadSource): Record<string, unknown> {
  const def = triggerDefinition(variant);
  const payload: Record<string, unknown> = {};
  for (const field of def.fields) {
    if (field.reference) {
      const id = numericResourceId(ev.resource_id);
      if (id === null)
        throw new PayloadBuildError(`${def.handle} needs a numeric ${field.payloadKey}; the event has none`);
      payload[field.payloadKey] = id;
      continue;
    }
    const source = FIELD_SOURCES[field.payloadKey];
    if (!source) throw new PayloadBuildError(`No value source for field "${field.payloadKey}" of ${def.handle}`);
    payload[field.payloadKey] = source(ev);
  }
  return payload;
}

/** Size Flow measures: the compact JSON of the payload, in bytes. */
export function payloadBytes(payload: unknown): number {
  return Buffer.byteLength(JSON.stringify(payload));
}

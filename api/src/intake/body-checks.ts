// What intake checks on a request's body before it is written: how it is encoded and typed
// (media), that it is a UTF-8 JSON object (validation), and that the Flow payload built from it
// fits what Shopify Flow accepts. Each check throws the AppError the sender is answered with.
import { AppError } from '../errors/problem.ts';
import { buildFlowPayload, FLOW_PAYLOAD_LIMIT_BYTES } from '../handoff/payload.ts';
import type { EndpointConfig } from '../services/endpoints.ts';
import type { Mapped } from './mapping.ts';

const JSON_MEDIA_RE = /^application\/([a-z0-9.+-]+\+)?json$/;
/** No content coding: the header empty or `identity` (case-insensitive, RFC 9110 §8.4). */
const IDENTITY_ENCODING_RE = /^\s*(identity)?\s*$/i;
/** Transfer codings other than chunking (RFC 9112 §6.1): only `chunked` (or `identity, chunked`) passes. */
const CHUNKED_ONLY_RE = /^\s*(identity\s*,\s*)?chunked\s*$/i;

/** Strict UTF-8 (a malformed byte throws); decode() without streaming keeps no state, so one serves all. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Refuses (unsupported_media_type) a compressed body or one that is not UTF-8 JSON. */
export function checkMedia(headers: { get(name: string): string | null }): void {
  // A compressed body is refused, not inflated: the signature covers the bytes as sent, and
  // a bomb could inflate far past the size limit.
  const ce = headers.get('content-encoding');
  if (ce !== null && !IDENTITY_ENCODING_RE.test(ce)) {
    throw new AppError('unsupported_media_type', {
      detail: `Content-Encoding "${ce.slice(0, 40)}" is not accepted; send the JSON body uncompressed.`,
    });
  }
  // The same for a compression applied as a transfer coding (`gzip, chunked`): the HTTP
  // parser removes only the chunking.
  const te = headers.get('transfer-encoding');
  if (te !== null && !CHUNKED_ONLY_RE.test(te)) {
    throw new AppError('unsupported_media_type', {
      detail: `Transfer-Encoding "${te.slice(0, 40)}" is not accepted; send the JSON body uncompressed (chunked alone is fine).`,
    });
  }
  const ct = headers.get('content-type');
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
}

/** The body as text; invalid_json when it is not valid UTF-8. */
export function decodeBody(raw: Uint8Array): string {
  try {
    return UTF8.decode(raw);
  } catch {
    throw new AppError('invalid_json', { detail: 'The body is not valid UTF-8.' });
  }
}

/** The body's JSON object; invalid_json or body_not_object otherwise. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError('invalid_json', { detail: 'The body is not valid JSON.' });
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new AppError('body_not_object');
  return body as Record<string, unknown>;
}

/** Refuses (flow_payload_too_large) an event whose Flow payload would exceed what Shopify Flow accepts. */
export function checkFlowPayloadSize(
  config: EndpointConfig,
  sender: string,
  mapped: Mapped,
  raw: Uint8Array,
  text: string,
  now: number,
): void {
  // Cheap bound first: escaping can at most 6x a byte, so small bodies always fit.
  if (raw.byteLength * 6 + 4096 <= FLOW_PAYLOAD_LIMIT_BYTES) return;
  const payload = buildFlowPayload(config.triggerVariant, {
    id: 'evt_00000000000000000000000000',
    event_type: mapped.eventType,
    sender,
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

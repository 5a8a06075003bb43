// Validation and mapping of an accepted body: required paths, the Shopify
// resource id (numeric or GID), the external event id for dedupe and the
// event type. Paths are dotted (`data.object.id`, array indexes as numbers).
import { AppError, type FieldError } from '../errors/problem.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { hasControlCharacters } from '../lib/control-chars.ts';
import { normaliseResourceId } from '../lib/shopify-ids.ts';
import type { EndpointConfig } from '../services/endpoints.ts';
import type { TriggerVariant } from '../store/tables/endpoints.ts';
import { AUTH_MODE_FACTS, externalIdSourceOf, type ValueSource } from './auth-modes.ts';
import type { HeaderReader } from './intake.ts';

export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const key of path.replace(/^\$\./, '').split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(key)) return undefined;
      cur = cur[Number(key)];
    } else {
      if (!Object.hasOwn(cur, key)) return undefined;
      cur = (cur as Record<string, unknown>)[key];
    }
  }
  return cur;
}

function isMissing(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

/** The GID type each trigger variant's resource must have (null: any). */
const VARIANT_GID_TYPE: Record<TriggerVariant, string | null> = {
  external_event: null,
  external_order_event: 'Order',
  external_customer_event: 'Customer',
  external_product_event: 'Product',
};

export interface Mapped {
  resourceId: string | null;
  relatedResourceId: string | null;
  externalEventId: string | null;
  eventType: string | null;
}

function readSource(src: ValueSource, headers: HeaderReader, body: unknown): unknown {
  if (src.from === 'json') return getPath(body, src.path);
  for (const name of src.names) {
    const v = headers.get(name);
    if (v !== null && v.trim() !== '') return v.trim();
  }
  return undefined;
}

/** Ids longer than this are hashed so the dedupe index stays small. */
const MAX_EXTERNAL_ID = 200;

function asIdString(v: unknown): string | null {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string' || v.trim() === '') return null;
  const s = v.trim();
  return s.length > MAX_EXTERNAL_ID ? `sha256:${sha256Hex(s)}` : s;
}

/** A JSON number's text as sent (the JSON.parse reviver's `context.source`, Node 21+). */
class NumberSource {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * The text of the number at `path` in `json`, exactly as sent. JSON.parse rounds an integer past
 * 2^53 (12345678901234567891 → 12345678901234567000), so two different ids would read the same;
 * only such a number is read again, so the usual body is parsed once.
 */
function numberTextAt(json: string, path: string): string | null {
  const parsed = JSON.parse(json, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined ? new NumberSource(context.source) : value,
  ) as unknown;
  const v = getPath(parsed, path);
  return v instanceof NumberSource ? v.text : null;
}

/**
 * Throws required_path_missing / invalid_resource_id; returns the mapped facts otherwise.
 * `text` is the JSON `body` was parsed from.
 */
export function mapBody(
  config: EndpointConfig,
  headers: HeaderReader,
  body: Record<string, unknown>,
  text: string,
): Mapped {
  const m = config.mapping;
  const missing: FieldError[] = [];
  for (const p of m.requiredPaths)
    if (isMissing(getPath(body, p)))
      missing.push({ path: p, message: 'Required by the endpoint mapping; absent, null or empty.' });
  let rawResource: unknown;
  if (m.resourceIdPath) {
    rawResource = getPath(body, m.resourceIdPath);
    if (isMissing(rawResource))
      missing.push({ path: m.resourceIdPath, message: 'The resource id path is absent, null or empty.' });
  }
  if (missing.length) {
    throw new AppError('required_path_missing', {
      detail: `Missing required field(s): ${missing.map((e) => e.path).join(', ')}.`,
      errors: missing,
    });
  }
  const expected = VARIANT_GID_TYPE[config.triggerVariant];
  let resourceId: string | null = null;
  if (m.resourceIdPath) {
    resourceId = normaliseResourceId(rawResource, expected);
    if (!resourceId) {
      throw new AppError('invalid_resource_id', {
        detail: `The value at ${m.resourceIdPath} is not a Shopify ${expected ?? 'resource'} id (positive integer or gid://shopify/${expected ?? '<Type>'}/<id>).`,
        errors: [{ path: m.resourceIdPath, message: 'Not a numeric id or matching GID.' }],
      });
    }
  }
  let relatedResourceId: string | null = null;
  if (m.relatedResourceIdPath) {
    const v = getPath(body, m.relatedResourceIdPath);
    if (!isMissing(v)) {
      relatedResourceId = normaliseResourceId(v, null);
      if (!relatedResourceId) {
        throw new AppError('invalid_resource_id', {
          detail: `The value at ${m.relatedResourceIdPath} is not a Shopify id.`,
          errors: [{ path: m.relatedResourceIdPath, message: 'Not a numeric id or GID.' }],
        });
      }
    }
  }
  const facts = AUTH_MODE_FACTS[config.authMode];
  const extSource = externalIdSourceOf(config);
  let extValue = extSource ? readSource(extSource, headers, body) : undefined;
  if (extSource?.from === 'json' && typeof extValue === 'number' && !Number.isSafeInteger(extValue))
    extValue = numberTextAt(text, extSource.path) ?? extValue;
  const externalEventId = extSource ? asIdString(extValue) : null;
  let eventType: unknown = facts.eventType ? readSource(facts.eventType, headers, body) : undefined;
  if (typeof eventType !== 'string' && m.eventTypePath) eventType = getPath(body, m.eventTypePath);
  // The external id and event type are stored in their own columns and matched on (dedupe,
  // filters): a NUL there would fail on PostgreSQL (500, retried forever) and a control character
  // makes no sense. Refused with a receipt; the raw body itself may hold any escaped character.
  const bad: FieldError[] = [];
  if (externalEventId !== null && hasControlCharacters(externalEventId))
    bad.push({
      path: extSource?.from === 'json' ? extSource.path : 'external_id',
      message: 'Contains a control character.',
    });
  if (typeof eventType === 'string' && hasControlCharacters(eventType))
    bad.push({ path: m.eventTypePath ?? 'event_type', message: 'Contains a control character.' });
  if (bad.length > 0) {
    throw new AppError('invalid_characters', {
      detail: `The event's ${bad.map((b) => b.path).join(' and ')} hold${bad.length === 1 ? 's' : ''} a NUL or another control character; an external id or event type may not. The event was not stored.`,
      errors: bad,
    });
  }
  return {
    resourceId,
    relatedResourceId,
    externalEventId,
    eventType: typeof eventType === 'string' && eventType !== '' ? eventType.slice(0, 200) : null,
  };
}

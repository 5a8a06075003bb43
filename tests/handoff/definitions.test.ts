// Trigger definitions (shopify/extensions/*), the payload builder that reads
// them, the outcome mapping and the retry schedule.
import { describe, expect, it } from 'vitest';
import { flowResult } from './helpers.ts';
import {
  classifyFlowResult,
  DEFAULT_RETRY_POLICY,
  retryDelayMs,
  retrySchedule,
  SUPPORT_CODES,
} from '../../api/src/handoff/outcomes.ts';
import {
  buildFlowPayload,
  numericResourceId,
  PayloadBuildError,
  TRIGGER_HANDLES,
} from '../../api/src/handoff/payload.ts';
import { loadTriggerDefinitions, parseToml } from '../../api/src/handoff/triggers.ts';
import { validatePayload } from '../../api/src/sandbox/app.ts';
import { TRIGGER_VARIANTS } from '../../api/src/store/tables/endpoints.ts';

const ev = {
  id: 'evt_x',
  event_type: 'order.paid',
  sender: 'stripe',
  external_event_id: 'ext_1',
  received_at: Date.UTC(2026, 0, 2, 3, 4, 5),
  body: '{"a":1}',
  resource_id: 'gid://shopify/Order/1234567890',
};

describe('trigger definitions', () => {
  it('one valid flow_trigger definition per variant, handles ≤ 30 chars, custom keys letters and spaces', () => {
    const defs = loadTriggerDefinitions();
    expect(defs.map((d) => d.variant)).toEqual([...TRIGGER_VARIANTS]);
    for (const d of defs) {
      expect(d.handle).toMatch(/^[A-Za-z0-9-]{1,30}$/);
      expect(d.handle).toBe(TRIGGER_HANDLES[d.variant]);
      for (const f of d.fields) if (!f.reference) expect(f.payloadKey).toMatch(/^[A-Za-z ]+$/);
      const keys = d.fields.map((f) => f.payloadKey);
      for (const k of ['Event type', 'Source', 'External event id', 'Received at', 'Body']) expect(keys).toContain(k);
    }
    const refs = Object.fromEntries(
      defs.map((d) => [d.variant, d.fields.filter((f) => f.reference).map((f) => f.payloadKey)]),
    );
    expect(refs).toEqual({
      external_event: [],
      external_order_event: ['order_id'],
      external_customer_event: ['customer_id'],
      external_product_event: ['product_id'],
    });
  });

  it('the TOML reader handles the subset and refuses what it does not know', () => {
    const doc = parseToml('a = "x # not a comment" # a comment\n[[t.f]]\nk = 1\n[[t.f]]\nk = true\n[s]\nq = "a\\nb"');
    expect(doc).toEqual({ a: 'x # not a comment', t: { f: [{ k: 1 }, { k: true }] }, s: { q: 'a\nb' } });
    expect(() => parseToml('a = [1, 2]')).toThrow(/unsupported value/);
  });
});

describe('payload builder', () => {
  it('maps an event to exactly the fields of its variant, and the sandbox accepts it', () => {
    for (const def of loadTriggerDefinitions()) {
      const p = buildFlowPayload(def.variant, ev);
      expect(Object.keys(p).sort()).toEqual(def.fields.map((f) => f.payloadKey).sort());
      expect(validatePayload(def, p)).toBeNull();
    }
    const order = buildFlowPayload('external_order_event', ev);
    expect(order).toMatchObject({
      order_id: 1234567890,
      'Event type': 'order.paid',
      Source: 'stripe',
      'External event id': 'ext_1',
      'Flowport event id': 'evt_x',
      'Received at': '2026-01-02T03:04:05.000Z',
      Body: '{"a":1}',
    });
  });

  it('falls back sensibly and refuses a reference variant without a resource id', () => {
    const p = buildFlowPayload('external_event', { ...ev, event_type: null, external_event_id: null, body: null });
    expect(p).toMatchObject({ 'Event type': 'unknown', 'External event id': 'evt_x', Body: '' });
    expect(() => buildFlowPayload('external_customer_event', { ...ev, resource_id: null })).toThrow(PayloadBuildError);
    expect(numericResourceId('42')).toBe(42);
    expect(numericResourceId('gid://shopify/Customer/7')).toBe(7);
    expect(numericResourceId('abc')).toBeNull();
  });
});

describe('outcome mapping', () => {
  it('maps every Flow answer to the documented outcome', () => {
    expect(classifyFlowResult(flowResult({}))).toMatchObject({ kind: 'final', outcome: 'delivered' });
    expect(
      classifyFlowResult(
        flowResult({
          userErrors: [{ field: ['body'], message: "Errors validating schema:\n  Invalid handle 'x'.\n" }],
        }),
      ),
    ).toMatchObject({ kind: 'final', outcome: 'no_workflow' });
    expect(
      classifyFlowResult(
        flowResult({
          userErrors: [
            {
              field: ['body'],
              message: 'Errors validating schema:\n  Properties size exceeds the limit of 50000 bytes.\n',
            },
          ],
        }),
      ),
    ).toMatchObject({ kind: 'final', outcome: 'too_large' });
    expect(classifyFlowResult(flowResult({ userErrors: [{ field: ['handle'], message: 'x' }] }))).toMatchObject({
      kind: 'final',
      outcome: 'rejected',
    });
    expect(classifyFlowResult(flowResult({ httpStatus: 401, hasData: false }))).toMatchObject({ kind: 'revoked' });
    expect(classifyFlowResult(flowResult({ throttled: true, hasData: false, throttleWaitMs: 900 }))).toMatchObject({
      kind: 'retry',
      outcome: 'throttled',
      notBeforeMs: 900,
    });
    expect(classifyFlowResult(flowResult({ httpStatus: 429, throttled: true, hasData: false }))).toMatchObject({
      kind: 'retry',
      outcome: 'throttled',
    });
    expect(classifyFlowResult(flowResult({ httpStatus: 503, hasData: false }))).toMatchObject({
      kind: 'retry',
      outcome: 'upstream_error',
    });
    expect(classifyFlowResult(flowResult({ httpStatus: null, transportError: 'timeout' }))).toMatchObject({
      kind: 'retry',
      outcome: 'timeout',
    });
    expect(classifyFlowResult(flowResult({ httpStatus: null, transportError: 'connection_error' }))).toMatchObject({
      kind: 'retry',
      outcome: 'connection_error',
    });
    // The app's access denied the GraphQL way (HTTP 200, no data) is the same store refusal as a 403.
    for (const denied of [
      flowResult({ httpStatus: 403, hasData: false }),
      flowResult({ httpStatus: 200, hasData: false, errorCodes: ['ACCESS_DENIED'] }),
    ])
      expect(classifyFlowResult(denied)).toMatchObject({
        kind: 'unavailable',
        status: 'access_denied',
        outcome: 'shop_access_denied',
      });
    // An ACCESS_DENIED next to an answer of the mutation is not a refusal of the store.
    expect(classifyFlowResult(flowResult({ errorCodes: ['ACCESS_DENIED'] }))).toMatchObject({ outcome: 'delivered' });
    expect(classifyFlowResult(flowResult({ hasData: false, errorCodes: ['INTERNAL_SERVER_ERROR'] }))).toMatchObject({
      outcome: 'upstream_error',
    });
  });

  it('support codes are unique, short and stable', () => {
    const codes = Object.values(SUPPORT_CODES).map((c) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const c of codes) expect(c).toMatch(/^FP-H-[A-Z0-9]{2,4}$/);
  });

  it('the retry schedule is bounded, exponential and fully jittered', () => {
    const rows = retrySchedule(DEFAULT_RETRY_POLICY);
    expect(rows).toHaveLength(DEFAULT_RETRY_POLICY.maxAttempts - 1);
    expect(rows[0]?.maxDelayMs).toBe(DEFAULT_RETRY_POLICY.baseMs);
    expect(rows[1]?.maxDelayMs).toBe(DEFAULT_RETRY_POLICY.baseMs * 2);
    for (const r of rows) expect(r.maxDelayMs).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.capMs);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 3, () => 0)).toBe(0);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 3, () => 0.999999)).toBe(DEFAULT_RETRY_POLICY.baseMs * 4 - 1);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 40, () => 0.5)).toBe(DEFAULT_RETRY_POLICY.capMs / 2);
  });
});

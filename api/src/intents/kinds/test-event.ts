// Test event: a synthetic event, clearly marked (`is_test = 1`, sender
// `flowport-test`, receipt auth result `test`), sent through the real pipeline
// (queue → worker → flowTriggerReceive). The preview shows the exact Flow payload;
// the event's id is minted at confirmation, like any event's at the moment it is
// received, so ids keep sorting by receive time (event paging relies on that).
import { shopHoldFor } from '../../handoff/outcomes.ts';
import { AppError } from '../../errors/problem.ts';
import { bodyExpiresAt } from '../../handoff/lifecycle.ts';
import {
  buildFlowPayload,
  FLOW_PAYLOAD_LIMIT_BYTES,
  numericResourceId,
  type PayloadSource,
  TRIGGER_HANDLES,
} from '../../handoff/payload.ts';
import { INTAKE_SUPPORT_CODES } from '../../errors/codes/intake.ts';
import { newId } from '../../ids.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { insertTestEvent } from '../../store/tables/events/intents.ts';
import { insertTestReceipt } from '../../store/tables/receipts.ts';
import type { IntentKindDef } from '../types.ts';
import { endpointSnapshot, loadEndpoint, NEW_EVENT_ID } from './common.ts';

export interface TestEventParams {
  payload?: Record<string, unknown>;
  event_type?: string;
  resource_id?: string;
}

export const TEST_EVENT_SENDER = 'flowport-test';
export const DEFAULT_TEST_EVENT_TYPE = 'flowport.test';

/**
 * What a test event's Flow payload is built from: the preview's (id NEW_EVENT_ID) and the event's
 * row alike. Its external event id is its own id, as insertTestEvent stores it.
 */
function testEventSource(source: Omit<PayloadSource, 'id' | 'external_event_id'>, id: string): PayloadSource {
  return { ...source, id, external_event_id: id };
}

function testBody(params: TestEventParams): string {
  return JSON.stringify(
    params.payload ?? { type: DEFAULT_TEST_EVENT_TYPE, test: true, message: 'Test event sent by Flowport' },
  );
}

export const testEventKind: IntentKindDef<TestEventParams> = {
  kind: 'test_event',
  label: 'test event',
  async inspect(kc, endpointId, params) {
    const endpoint = await loadEndpoint(kc, endpointId);
    const body = testBody(params);
    const eventType = params.event_type ?? DEFAULT_TEST_EVENT_TYPE;
    const resourceId = params.resource_id ?? null;
    if (resourceId !== null && numericResourceId(resourceId) === null) {
      throw new AppError('invalid_request', {
        detail: 'resource_id must be a numeric Shopify id or a GID like gid://shopify/Order/123.',
        errors: [{ path: 'resource_id', message: 'numeric id or GID' }],
      });
    }
    const source = {
      event_type: eventType,
      sender: TEST_EVENT_SENDER,
      received_at: kc.now,
      body,
      resource_id: resourceId,
    };
    let flowPayload: Record<string, unknown>;
    let payloadBytes: number;
    try {
      flowPayload = buildFlowPayload(endpoint.trigger_variant, testEventSource(source, NEW_EVENT_ID));
      // Measured with an id of the real length: the event id is part of the payload Flow measures.
      payloadBytes = Buffer.byteLength(
        JSON.stringify(buildFlowPayload(endpoint.trigger_variant, testEventSource(source, newId('event', kc.now)))),
      );
    } catch (err) {
      throw new AppError('invalid_request', {
        detail: `The ${endpoint.trigger_variant} trigger needs a Shopify resource: ${err instanceof Error ? err.message : String(err)}. Pass resource_id (a numeric id or GID).`,
        errors: [{ path: 'resource_id', message: 'required for this trigger variant' }],
      });
    }
    if (payloadBytes > FLOW_PAYLOAD_LIMIT_BYTES) {
      throw new AppError('invalid_request', {
        detail: `The Flow payload would be ${payloadBytes} bytes; Flow accepts at most ${FLOW_PAYLOAD_LIMIT_BYTES}. Send a smaller test payload.`,
        errors: [{ path: 'payload', message: 'too large for Flow' }],
      });
    }
    const handle = TRIGGER_HANDLES[endpoint.trigger_variant];
    const warnings = [
      'Flow starts a real workflow run for a test event: workflows on this trigger run their actions unless they check the "Source" field.',
    ];
    if (endpoint.status === 'paused')
      warnings.push('The endpoint is paused for sender intake; the test event is still handed to Flow.');
    const hold = shopHoldFor(kc.shop.connection_status);
    if (hold) warnings.push(`${hold.why}; the test event will be held. ${hold.release}`);
    return {
      targetType: 'endpoint',
      targetId: endpoint.id,
      fingerprint: {
        status: endpoint.status,
        config_version: Number(endpoint.config_version),
        trigger: endpoint.trigger_variant,
      },
      preview: {
        summary: `Send a synthetic test event through endpoint ${endpoint.id} to the Flow trigger "${handle}" of ${kc.shop.domain}.`,
        target: { endpoint_id: endpoint.id, name: endpoint.name, status: endpoint.status },
        current_config: endpointSnapshot(endpoint, kc.now),
        effects: [
          `Creates a new event marked as a test (is_test: true, sender "${TEST_EVENT_SENDER}") in state queued; its id is in the confirmation result.`,
          `The delivery worker calls flowTriggerReceive with handle "${handle}"; the attempt is recorded with trigger "test".`,
          'Counts 1 execution against the monthly plan.',
        ],
        warnings,
        details: {
          event_type: eventType,
          body,
          flow_trigger_handle: handle,
          flow_payload: flowPayload,
          external_event_id: NEW_EVENT_ID,
          flow_payload_note: `The new event's id (shown as ${NEW_EVENT_ID}) and "Received at" are set when the event is created at confirmation. A test event's external event id is its own id (the event read shows it as external_event_id).`,
          payload_bytes: payloadBytes,
        },
      },
    };
  },

  async execute(kc, intent, params) {
    const endpoint = await loadEndpoint(kc, intent.target_id);
    const eventId = newId('event', kc.now);
    const body = testBody(params);
    const receiptId = newId('receipt', kc.now);
    const size = Buffer.byteLength(body);
    const hash = sha256Hex(body);
    await insertTestReceipt(kc.db, {
      id: receiptId,
      shopId: kc.shop.id,
      endpointId: endpoint.id,
      eventId,
      requestId: kc.requestId,
      now: kc.now,
      configVersion: endpoint.config_version,
      bodySize: size,
      bodySha256: hash,
      supportCode: INTAKE_SUPPORT_CODES.accepted.code,
    });
    await insertTestEvent(kc.db, {
      id: eventId,
      shopId: kc.shop.id,
      endpointId: endpoint.id,
      receiptId,
      eventType: params.event_type ?? DEFAULT_TEST_EVENT_TYPE,
      sender: TEST_EVENT_SENDER,
      body,
      bodySize: size,
      bodySha256: hash,
      resourceId: params.resource_id ?? null,
      configVersion: endpoint.config_version,
      now: kc.now,
      bodyExpiresAt: bodyExpiresAt(kc.services.config, { received_at: kc.now }, kc.shop),
    });
    return {
      result: {
        event_id: eventId,
        receipt_id: receiptId,
        is_test: true,
        state: 'queued',
        links: { event: `/agent/v1/events/${eventId}` },
      },
      after: () => kc.services.hooks.kickWorker?.(),
    };
  },
};

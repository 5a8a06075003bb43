import { z } from '@hono/zod-openapi';
import { AUTH_MODES } from '../../services/endpoints.ts';
import { Timestamp } from '../read-schemas.ts';

export const Receipt = z
  .object({
    id: z.string().openapi({ example: 'rcpt_01jd0000000000000000000000' }),
    event_id: z
      .string()
      .nullable()
      .describe(
        "Null when no event was stored: intake rejected the request, or answered a sender's URL-verification handshake.",
      ),
    endpoint_id: z.string(),
    auth_mode: z
      .enum(AUTH_MODES)
      .nullable()
      .describe("The endpoint's auth mode: how the request was verified (null only if the endpoint row is gone)."),
    request_id: z.string(),
    received_at: Timestamp,
    auth_result: z.string(),
    validation_result: z.string(),
    dedupe_decision: z.string(),
    endpoint_config_version: z.number().int(),
    http_status: z.number().int().describe('The HTTP status Flowport answered the sender with.'),
    error_code: z.string().nullable(),
    support_code: z.string().nullable(),
    body_size: z.number().int(),
    body_sha256: z.string().nullable(),
    handoff: z
      .object({
        state: z.string(),
        support_code: z.string().nullable(),
        error_code: z.string().nullable(),
        delivered_at: Timestamp.nullable(),
        attempt_count: z.number().int(),
        flow_readiness: z
          .object({
            trigger: z.string().describe("The Flow trigger handle of the event's endpoint."),
            enabled_workflow: z
              .enum(['yes', 'no', 'unknown'])
              .describe(
                "Whether an enabled Shopify Flow workflow uses the trigger in this store, per Flow's newest trigger lifecycle callback; `unknown` until Flow sends one. `no`: the trigger's events end `no_workflow` without a call to Shopify.",
              ),
            since: Timestamp.nullable().describe("The time of Flow's signal; null when unknown."),
          })
          .describe("Flow readiness of the event's trigger now."),
      })
      .nullable()
      .describe('Where the handoff to Shopify Flow stands now; null when no event was stored.'),
  })
  .openapi('Receipt');

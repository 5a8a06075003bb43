// GET /agent/v1/diagnostics — a support-safe summary: readiness checks, endpoint
// snapshot without secrets, recent receipt facts and support codes. The same
// facts a diagnostics share freezes; nothing here may be private.
import { z } from '@hono/zod-openapi';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { ReadinessCheckSchema, ShopConnectionFields } from '../read-checks.ts';
import { Timestamp } from '../read-schemas.ts';
import { defineOperation } from '../../core/types.ts';
import { readDiagnostics } from '../../reads/diagnostics.ts';

export const Diagnostics = z
  .object({
    generated_at: Timestamp,
    shop: z.object({ id: z.string(), domain: z.string(), plan: z.string(), ...ShopConnectionFields }),
    checks: z.array(ReadinessCheckSchema),
    endpoints: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        sender_label: z.string(),
        auth_mode: z.string(),
        trigger_variant: z.string(),
        status: z.string(),
        config_version: z.number().int(),
        secret_last4: z.string().nullable(),
      }),
    ),
    events_24h: z.object({
      by_state: z.record(z.string(), z.number().int()),
      by_support_code: z.array(z.object({ support_code: z.string(), count: z.number().int() })),
    }),
    recent_receipts: z.array(
      z.object({
        id: z.string(),
        endpoint_id: z.string(),
        event_id: z.string().nullable(),
        received_at: Timestamp,
        http_status: z.number().int(),
        auth_result: z.string(),
        validation_result: z.string(),
        dedupe_decision: z.string(),
        error_code: z.string().nullable(),
        support_code: z.string().nullable(),
      }),
    ),
    redaction: z.string(),
  })
  .openapi('Diagnostics');

export const getDiagnostics = defineOperation({
  operationId: 'getDiagnostics',
  method: 'get',
  path: `${AGENT_API_PREFIX}/diagnostics`,
  summary: 'Read diagnostics',
  description:
    'A support-safe summary: readiness checks, endpoints without secrets, events of the last 24 hours by state and support code, and the most recent receipts. Contains no payloads, secrets or tokens; share it with support through a diagnostics-share intent.',
  family: 'events',
  kind: 'read',
  scope: 'diagnostics:read',
  meter: 'rich_read',
  request: {
    query: z.object({
      endpoint_id: z
        .string()
        .max(64)
        .optional()
        .openapi({
          param: { name: 'endpoint_id', in: 'query' },
          description: 'Limit the summary to one endpoint (`ep_…`).',
        }),
    }),
  },
  response: Diagnostics,
  errors: ['not_found'],
  mcp: {
    name: 'get_diagnostics',
    title: 'Read support diagnostics',
    description:
      'Get a redacted health summary to diagnose delivery problems or hand to support: readiness checks, recent receipts, support codes and event states of the last 24 hours.',
  },
  cli: ['get-diagnostics'],
  run: async ({ ctx, input }) => readDiagnostics({ ctx, input }),
});

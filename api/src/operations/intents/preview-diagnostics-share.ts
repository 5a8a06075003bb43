// POST /agent/v1/diagnostics/share-intents — preview sharing a redacted,
// frozen diagnostics bundle behind an expiring link support can open without a grant.
import { z } from '@hono/zod-openapi';
import { previewIntent } from '../../intents/engine.ts';
import { DEFAULT_RECEIPT_LIMIT, DEFAULT_SHARE_HOURS, MAX_SHARE_HOURS } from '../../intents/kinds/diagnostics-share.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { defineOperation } from '../../core/types.ts';
import { ActionIntentSchema, callerOf, PREVIEW_ERRORS, PREVIEW_NOTE } from './shared.ts';

export const DiagnosticsShareIntentBody = z
  .object({
    endpoint_id: z
      .string()
      .max(64)
      .nullable()
      .optional()
      .describe('Limit the bundle to one endpoint; omit for every endpoint of the shop.'),
    expires_in_hours: z
      .number()
      .int()
      .min(1)
      .max(MAX_SHARE_HOURS)
      .optional()
      .describe(`Link lifetime (default ${DEFAULT_SHARE_HOURS}).`),
    receipt_limit: z
      .number()
      .int()
      .min(1)
      .max(200)
      .optional()
      .describe(`Recent receipts to include (default ${DEFAULT_RECEIPT_LIMIT}).`),
  })
  .openapi('DiagnosticsShareIntentRequest');

export const previewDiagnosticsShare = defineOperation({
  operationId: 'createDiagnosticsShareIntent',
  method: 'post',
  path: `${AGENT_API_PREFIX}/diagnostics/share-intents`,
  summary: 'Preview a diagnostics share',
  description: `Lists exactly what the bundle will include and exclude (never payload bodies or secrets), the link lifetime and the cost. Confirmation freezes the bundle behind an unguessable link \`/shared/diagnostics/<token>\` (HTML and JSON, no grant needed) shown once. ${PREVIEW_NOTE}`,
  family: 'recovery',
  kind: 'preview',
  scope: 'diagnostics_share:preview',
  meter: 'preview',
  request: { body: DiagnosticsShareIntentBody },
  response: ActionIntentSchema,
  successStatus: 201,
  errors: [...PREVIEW_ERRORS, 'endpoint_archived', 'diagnostics_share_limit_reached'],
  mcp: {
    name: 'preview_diagnostics_share',
    title: 'Preview sharing diagnostics with support',
    description:
      'Prepare a redacted diagnostics bundle (endpoint config without secrets, recent receipt facts, support codes, readiness checks) to share with a support team through an expiring link. Shows what is included and excluded; nothing is shared until confirmed.',
  },
  cli: ['diagnostics', 'share'],
  async run({ ctx, input }) {
    return previewIntent(callerOf(ctx), 'diagnostics_share', null, input);
  },
});

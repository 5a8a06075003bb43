// GET /agent/v1/audit — the shop's audit entries (hash-chained), newest first,
// filterable by action, outcome, grant, target and time.
import { z } from '@hono/zod-openapi';
import { Actor, Cursor, Limit, PageInfo, Timestamp, queryParam as q } from '../read-schemas.ts';
import { defineRead } from '../define.ts';
import { listAuditEntries } from '../../reads/audit.ts';

export const AuditEntrySchema = z
  .object({
    id: z.string().openapi({ example: 'aud_01jd0000000000000000000000', description: 'Audit entry id (`aud_…`).' }),
    seq: z
      .number()
      .int()
      .describe("Position in this shop's own hash chain (1, 2, 3 … per shop; other shops' entries are not counted)."),
    at: Timestamp.describe('When the action happened (ISO 8601, UTC).'),
    actor: Actor.describe('Who acted.'),
    action: z
      .string()
      .describe(
        'A dotted verb: each step of an action intent is one entry `<kind>.<step>` (`replay.preview`, `replay.confirm`, `replay.execute`, `bulk_replay.cancel`), and `grant.create`, `shop.reconnect`…; or, for any other call audited (a refusal of a read, a call refused before the intent engine), its operation id (e.g. `listAudit`).',
      ),
    target: z
      .object({
        type: z
          .string()
          .nullable()
          .describe('Kind of object acted on (e.g. `event`, `endpoint`, `action_intent`); null when none.'),
        id: z.string().nullable().describe('Id of the object acted on; null when none.'),
      })
      .describe('What the action was about.'),
    outcome: z.string().describe('`success`, `refused` or `failed`.'),
    request_id: z
      .string()
      .nullable()
      .describe('Request id of the call that acted (`X-Request-Id`); null for background work.'),
    details: z
      .record(z.string(), z.unknown())
      .describe('Action-specific facts (e.g. the intent kind, counts, error code); never secrets or payloads.'),
    prev_hash: z.string().describe("`hash` of this shop's previous entry (`seq` − 1); 64 zeros for entry 1."),
    hash: z
      .string()
      .describe(
        'SHA-256 (hex) of the JSON array `["flowport-audit-shop-v1", seq, id, at in epoch ms, shop id, actor.grant_id, actor.kind, actor.name, action, target.type, target.id, outcome, request_id, JSON of details, prev_hash]`: recompute it to verify the chain.',
      ),
  })
  .openapi('AuditEntry');

export const listAudit = defineRead({
  name: 'list_audit',
  path: '/audit',
  summary: 'List audit entries',
  description:
    "The shop's audit log, newest first: who (grant, human or agent, name) did what to which target, with what outcome and request id. Entries form this shop's own hash chain (seq 1, 2, 3 …; each stores the previous entry's hash), which a client can verify from the entries alone (see `hash`); an operator verifies it in the store with `npx flowport audit verify --shop <id>`.",
  family: 'account',
  scope: 'audit:read',
  meter: 'rich_read',
  request: {
    query: z.object({
      action: z
        .string()
        .max(100)
        .optional()
        .openapi(q('action', 'Exact action, e.g. `replay.execute`, `replay.confirm` or `grant.create`.')),
      outcome: z
        .enum(['success', 'refused', 'failed'])
        .optional()
        .openapi(q('outcome', 'Only entries with this outcome.')),
      grant_id: z.string().max(64).optional().openapi(q('grant_id', 'Only entries by this grant (`grt_…`).')),
      target_id: z.string().max(64).optional().openapi(q('target_id', 'Only entries about this object id.')),
      since: z.iso.datetime({ offset: true }).optional().openapi(q('since', 'Entries at or after this time.')),
      until: z.iso.datetime({ offset: true }).optional().openapi(q('until', 'Entries before this time.')),
      cursor: Cursor,
      limit: Limit,
    }),
  },
  response: z
    .object({
      data: z.array(AuditEntrySchema).describe('Audit entries, newest first.'),
      page: PageInfo.describe('Paging: pass `next_cursor` as `cursor` for older entries.'),
    })
    .openapi('AuditList'),
  mcp: {
    title: 'Read the audit log',
    description:
      'See who did what in this shop: previews, confirmations, refusals and grant changes, each attributed to a grant and a human or agent. Filter by action, outcome, grant, target or time.',
  },
  run: async ({ ctx, input }) => listAuditEntries({ ctx, input }),
});

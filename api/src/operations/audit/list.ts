// GET /agent/v1/audit — the shop's audit entries (hash-chained), newest first,
// filterable by action, outcome, grant, target and time.
import { z } from '@hono/zod-openapi';
import type { AuditRow } from '../../audit/log.ts';
import { AppError } from '../../errors/problem.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import type { SqlParam } from '../../store/db.ts';
import { Actor, Cursor, Limit, openCursor, PageInfo, sealCursor, Timestamp } from '../read-schemas.ts';
import { defineOperation } from '../../core/types.ts';

const q = (name: string, description: string) => ({ param: { name, in: 'query' as const }, description });

export const AuditEntrySchema = z
  .object({
    id: z.string().openapi({ example: 'aud_01jd0000000000000000000000' }),
    seq: z.number().int().describe('Position in the global hash chain.'),
    at: Timestamp,
    actor: Actor,
    action: z
      .string()
      .describe('The operation id (e.g. `confirmActionIntent`) or a dotted verb (`replay.execute`, `grant.create`).'),
    target: z.object({ type: z.string().nullable(), id: z.string().nullable() }),
    outcome: z.string().describe('`success`, `refused` or `failed`.'),
    request_id: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    prev_hash: z.string(),
    hash: z.string(),
  })
  .openapi('AuditEntry');

export const listAudit = defineOperation({
  operationId: 'listAudit',
  method: 'get',
  path: `${AGENT_API_PREFIX}/audit`,
  summary: 'List audit entries',
  description:
    "The shop's audit log, newest first: who (grant, human or agent, name) did what to which target, with what outcome and request id. Entries are hash-chained (each stores the previous entry's hash); a human verifies the chain with `flowport audit verify`.",
  family: 'account',
  kind: 'read',
  scope: 'audit:read',
  meter: 'rich_read',
  request: {
    query: z.object({
      action: z
        .string()
        .max(100)
        .optional()
        .openapi(q('action', 'Exact action, e.g. `replay.execute`, `confirmActionIntent` or `grant.create`.')),
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
  response: z.object({ data: z.array(AuditEntrySchema), page: PageInfo }).openapi('AuditList'),
  errors: [],
  mcp: {
    name: 'list_audit',
    title: 'Read the audit log',
    description:
      'See who did what in this shop: previews, confirmations, refusals and grant changes, each attributed to a grant and a human or agent. Filter by action, outcome, grant, target or time.',
  },
  cli: ['audit'],
  async run({ ctx, input }) {
    const p = ctx.principal;
    if (!p) throw new AppError('missing_token');
    const where = ['shop_id = ?'];
    const params: SqlParam[] = [p.shopId];
    const eq = (col: string, v: string | undefined) => {
      if (v === undefined) return;
      where.push(`${col} = ?`);
      params.push(v);
    };
    eq('action', input.action);
    eq('outcome', input.outcome);
    eq('actor_grant_id', input.grant_id);
    eq('target_id', input.target_id);
    if (input.since) {
      where.push('at >= ?');
      params.push(Date.parse(input.since));
    }
    if (input.until) {
      where.push('at < ?');
      params.push(Date.parse(input.until));
    }
    // Sealed like the events cursor: bound to this shop, unreadable and unforgeable.
    const cursorScope = `${p.shopId}:audit`;
    if (input.cursor) {
      const seq = openCursor(ctx.services.secrets, cursorScope, input.cursor);
      if (seq === null || !/^\d{1,18}$/.test(seq)) {
        throw new AppError('invalid_request', {
          detail: 'The cursor is not one this API returned for this shop. Start again without `cursor`.',
          errors: [{ path: 'cursor', message: 'Unrecognised cursor' }],
        });
      }
      where.push('seq < ?');
      params.push(Number(seq));
    }
    params.push(input.limit + 1);
    const rows = await ctx.services.db.all<AuditRow>(
      `SELECT * FROM audit_log WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`,
      params,
    );
    const hasMore = rows.length > input.limit;
    const page = hasMore ? rows.slice(0, input.limit) : rows;
    const last = page.at(-1);
    return {
      data: page.map((r) => ({
        id: r.id,
        seq: Number(r.seq),
        at: new Date(Number(r.at)).toISOString(),
        actor: { grant_id: r.actor_grant_id, kind: r.actor_kind, name: r.actor_name },
        action: r.action,
        target: { type: r.target_type, id: r.target_id },
        outcome: r.outcome,
        request_id: r.request_id,
        details: JSON.parse(r.details_json) as Record<string, unknown>,
        prev_hash: r.prev_hash,
        hash: r.hash,
      })),
      page: {
        next_cursor: hasMore && last ? sealCursor(ctx.services.secrets, cursorScope, String(Number(last.seq))) : null,
        has_more: hasMore,
        limit: input.limit,
      },
    };
  },
});

// The audit log as the listAudit operation reads it: filtered, newest first, paged with a
// cursor sealed to the shop.
import { type AuditRow, shopAuditView } from '../audit/log.ts';
import type { OperationContext } from '../core/types.ts';
import { cursorPosition, listScope, pageOf } from './paging.ts';
import { conditions } from './shared.ts';

/** The filters and page of listAudit (validated by the operation). */
export interface AuditListInput {
  action?: string;
  outcome?: string;
  grant_id?: string;
  target_id?: string;
  since?: string;
  until?: string;
  cursor?: string;
  limit: number;
}

/** The shop's audit log, newest first, filtered and paged with a sealed cursor (listAudit). */
export async function listAuditEntries({ ctx, input }: { ctx: OperationContext; input: AuditListInput }) {
  const p = ctx.principal;
  const { where, params, add, eq } = conditions('shop_id = ?', p.shopId);
  eq('action', input.action);
  eq('outcome', input.outcome);
  eq('actor_grant_id', input.grant_id);
  eq('target_id', input.target_id);
  if (input.since) add('at >= ?', Date.parse(input.since));
  if (input.until) add('at < ?', Date.parse(input.until));
  // Sealed like every list cursor: bound to this shop, unreadable and unforgeable. The position
  // is the shop's own sequence (issue 24): cursors of the global sequence are refused.
  const cursorScope = listScope('audit', p.shopId);
  const seq = cursorPosition(ctx.services.secrets, cursorScope, input.cursor, (x) => /^\d{1,18}$/.test(x));
  if (seq !== null) add('shop_seq < ?', Number(seq));
  params.push(input.limit + 1);
  const rows = await ctx.services.db.all<AuditRow>(
    `SELECT * FROM audit_log WHERE ${where.join(' AND ')} ORDER BY shop_seq DESC LIMIT ?`,
    params,
  );
  const { rows: entries, page } = pageOf(ctx.services.secrets, cursorScope, rows, input.limit, (r) =>
    String(Number(r.shop_seq)),
  );
  // The shop's own chain only: no global seq, no other shop's hash (audit/log.ts shopAuditView).
  return { data: entries.map(shopAuditView), page };
}

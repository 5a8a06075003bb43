// The shop's alert subscriptions as listAlertSubscriptions pages them (ADR 1311): oldest first,
// active ones by default, removed ones (tombstones) with `status=removed`. Never the URL (a Slack
// URL is a credential) or the signing secret: the channel, the URL's origin and the note only.
import type { OperationContext } from '../core/types.ts';
import { isId } from '../ids.ts';
import type { AlertSubscriptionRow } from '../store/tables/alerts.ts';
import { cursorPosition, listScope, pageOf } from './paging.ts';
import { iso, isoReq } from './shared.ts';

export const ALERT_SUBSCRIPTION_STATUSES = ['active', 'removed'] as const;

/** What every surface shows of one subscription. */
export function alertSubscriptionView(r: AlertSubscriptionRow) {
  return {
    id: r.id,
    object: 'alert_subscription' as const,
    channel: r.channel,
    origin: r.url_origin,
    note: r.note,
    status: r.removed_at === null ? ('active' as const) : ('removed' as const),
    created_at: isoReq(Number(r.created_at)),
    created_by_grant: r.created_by_grant,
    removed_at: iso(r.removed_at === null ? null : Number(r.removed_at)),
    removed_by_grant: r.removed_by_grant,
  };
}

export async function listAlertSubscriptionsPage({
  ctx,
  input,
}: {
  ctx: OperationContext;
  input: { status: 'active' | 'removed'; limit: number; cursor?: string };
}) {
  const { services, principal } = ctx;
  const scope = listScope('alert-subscriptions', principal.shopId);
  const after = cursorPosition(services.secrets, scope, input.cursor, (id) => isId('alert', id));
  const where = ['shop_id = ?', input.status === 'removed' ? 'removed_at IS NOT NULL' : 'removed_at IS NULL'];
  const args: (string | number)[] = [principal.shopId];
  if (after !== null) {
    where.push('id > ?');
    args.push(after);
  }
  const fetched = await services.db.all<AlertSubscriptionRow>(
    `SELECT * FROM alert_subscriptions WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`,
    [...args, input.limit + 1],
  );
  const { rows, page } = pageOf(services.secrets, scope, fetched, input.limit, (r) => r.id);
  return { data: rows.map(alertSubscriptionView), page };
}

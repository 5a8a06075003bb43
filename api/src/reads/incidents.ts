// The shop's incidents (listIncidents), newest first, with how their messages went; the alert
// triggers and the incident view the monitor (api/src/intents/alerts.ts) shares. Incidents are
// worked out for every shop, subscribed or not: subscriptions only decide who is told.
import type { OperationContext } from '../core/types.ts';
import { isId } from '../ids.ts';
import { cursorPosition, listScope, pageOf } from './paging.ts';

/** What fires an alert (api/src/intents/alerts.ts evaluates them). */
export const ALERT_TRIGGERS = {
  endpoint_failing: "An endpoint's failed deliveries and intake rejections cross the threshold within the window.",
  shop_held:
    'Shopify refuses the shop (frozen, locked), its token was revoked or the app was uninstalled: events are held.',
  no_workflow: 'Events keep ending no_workflow: the Flow trigger has no enabled workflow while events arrive.',
  retention_expiring:
    'Retained bodies expire within a day: failed or no_workflow events never replayed, or held events not released by then.',
  secret_overlap_ending:
    "A secret rotation's overlap ends within the hour: senders still on the old secret will be refused.",
} as const;
export type AlertTrigger = keyof typeof ALERT_TRIGGERS;

export interface IncidentRow {
  id: string;
  shop_id: string;
  trigger: string;
  subject: string;
  state: string;
  summary: string;
  details_json: string;
  opened_at: number | string;
  resolved_at: number | string | null;
}

export function incidentView(inc: IncidentRow) {
  return {
    id: inc.id,
    object: 'incident' as const,
    trigger: inc.trigger,
    about: ALERT_TRIGGERS[inc.trigger as AlertTrigger] ?? '',
    subject: inc.subject,
    state: inc.state as 'open' | 'resolved',
    summary: inc.summary,
    details: JSON.parse(inc.details_json) as Record<string, unknown>,
    opened_at: new Date(Number(inc.opened_at)).toISOString(),
    resolved_at: inc.resolved_at === null ? null : new Date(Number(inc.resolved_at)).toISOString(),
  };
}

export async function listIncidentViews({
  ctx,
  input,
}: {
  ctx: OperationContext;
  input: { state?: 'open' | 'resolved'; limit: number; cursor?: string };
}) {
  const services = ctx.services;
  const principal = ctx.principal;
  const where = ['shop_id = ?'];
  const args: (string | number)[] = [principal.shopId];
  if (input.state) {
    where.push('state = ?');
    args.push(input.state);
  }
  // The one list shape (ADR 0013): keyset on the incident id, newest first.
  const scope = listScope('incidents', principal.shopId);
  const before = cursorPosition(services.secrets, scope, input.cursor, (id) => isId('incident', id));
  if (before !== null) {
    where.push('id < ?');
    args.push(before);
  }
  const fetched = await services.db.all<IncidentRow>(
    `SELECT * FROM alert_incidents WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`,
    [...args, input.limit + 1],
  );
  const { rows, page } = pageOf(services.secrets, scope, fetched, input.limit, (r) => r.id);
  const data = [];
  for (const r of rows) {
    const notes = await services.db.all<{
      channel: string;
      kind: 'opened' | 'resolved';
      status: 'pending' | 'sent' | 'failed' | 'cancelled';
      attempts: number | string;
    }>(
      `SELECT s.channel, n.kind, n.status, n.attempts FROM alert_notifications n JOIN alert_subscriptions s ON s.id = n.subscription_id
        WHERE n.incident_id = ? ORDER BY n.id`,
      [r.id],
    );
    data.push({ ...incidentView(r), notifications: notes.map((n) => ({ ...n, attempts: Number(n.attempts) })) });
  }
  return { data, page };
}

// Removing an alert subscription (ADR 1311), governed like subscribing: an action intent. The
// subscription is told nothing more (its pending messages are cancelled), its sealed URL and
// signing secret are destroyed, and it stays listed as `removed` (`status=removed`).
import { AppError } from '../../errors/problem.ts';
import { alertSubscriptionView } from '../../reads/alert-subscriptions.ts';
import {
  countPendingAlertNotifications,
  findActiveShopAlertSubscription,
  listShopAlertSubscriptions,
  removeAlertSubscription,
} from '../../store/tables/alerts.ts';
import type { IntentKindDef, KindContext } from '../types.ts';

export type AlertUnsubscribeParams = Record<string, never>;

async function loadSubscription(kc: KindContext, id: string | null) {
  const row = id ? await findActiveShopAlertSubscription(kc.db, kc.shop.id, id) : undefined;
  if (!row)
    throw new AppError('not_found', {
      detail: `No active alert subscription ${id} in this shop. GET /agent/v1/alert-subscriptions lists them (removed ones with status=removed).`,
    });
  return row;
}

export const alertUnsubscribeKind: IntentKindDef<AlertUnsubscribeParams> = {
  kind: 'alert_unsubscribe',
  label: 'alert subscription removal',
  async inspect(kc, subscriptionId) {
    const row = await loadSubscription(kc, subscriptionId);
    const pending = await countPendingAlertNotifications(kc.db, row.id);
    const active = await listShopAlertSubscriptions(kc.db, kc.shop.id);
    const others = active.filter((s) => s.id !== row.id);
    const where = `${row.channel === 'slack' ? 'Slack-compatible incoming webhook' : 'webhook'} at ${row.url_origin}`;
    return {
      targetType: 'alert_subscription',
      targetId: row.id,
      fingerprint: { subscription: row.id, removed_at: null },
      preview: {
        summary: `Stop sending operational alerts of ${kc.shop.domain} to the ${where} (${row.id}).`,
        target: alertSubscriptionView(row),
        current_config: {
          subscriptions: active.map((s) => ({ id: s.id, channel: s.channel, origin: s.url_origin })),
        },
        effects: [
          'The subscription is told of no further incident, opened or resolved.',
          `Cancels ${pending} message(s) still waiting to be sent to it.`,
          'Destroys its stored URL and signing secret; it stays listed with status `removed` (GET /agent/v1/alert-subscriptions?status=removed).',
        ],
        warnings:
          others.length === 0
            ? [
                'It is the last active subscription: nobody will be told of incidents. They stay readable with GET /agent/v1/incidents.',
              ]
            : [],
        details: { subscription_id: row.id, channel: row.channel, origin: row.url_origin, pending_messages: pending },
      },
    };
  },
  async execute(kc, intent) {
    const row = await loadSubscription(kc, intent.target_id);
    const { removed, cancelled } = await removeAlertSubscription(kc.db, {
      id: row.id,
      shopId: kc.shop.id,
      grantId: intent.confirmed_by_grant ?? kc.principal.grantId,
      now: kc.now,
    });
    // Another confirmation removed it between the check above and this write.
    if (!removed) throw new AppError('not_found', { detail: `Alert subscription ${row.id} is already removed.` });
    return {
      result: {
        subscription_id: row.id,
        channel: row.channel,
        origin: row.url_origin,
        removed_at: new Date(kc.now).toISOString(),
        cancelled_messages: cancelled,
      },
    };
  },
};

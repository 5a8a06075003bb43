// GET /agent/v1/alert-subscriptions — the shop's alert subscriptions (ADR 1311), oldest first.
import { z } from '@hono/zod-openapi';
import { ALERT_SUBSCRIPTION_STATUSES, listAlertSubscriptionsPage } from '../../reads/alert-subscriptions.ts';
import { defineRead } from '../define.ts';
import { Cursor, Limit, nullableText, PageInfo, queryParam as q, Timestamp } from '../read-schemas.ts';

export const AlertSubscriptionSchema = z
  .object({
    id: z.string().openapi({ example: 'alrt_01jd5x0k3q8v2m4n6p8r0s2t4v', description: 'Subscription id (`alrt_…`).' }),
    object: z.literal('alert_subscription').describe('Object type, always `alert_subscription`.'),
    channel: z
      .string()
      .describe('`webhook` (signed per Standard Webhooks) or `slack` (a Slack-compatible incoming webhook).'),
    origin: z.string().describe('The origin of the URL messages go to; the URL itself is never shown.'),
    note: nullableText('The note given when subscribing; null when none.'),
    status: z
      .enum(ALERT_SUBSCRIPTION_STATUSES)
      .describe('`active`: told of every incident; `removed`: told nothing more, its URL and secret destroyed.'),
    created_at: Timestamp.describe('When the subscription was confirmed (ISO 8601, UTC).'),
    created_by_grant: nullableText('The grant that confirmed the subscription (`grt_…`).'),
    removed_at: nullableText('When it was removed (ISO 8601, UTC); null while active.'),
    removed_by_grant: nullableText('The grant that confirmed the removal; null while active.'),
  })
  .openapi('AlertSubscription');

export const listAlertSubscriptions = defineRead({
  name: 'list_alert_subscriptions',
  path: '/alert-subscriptions',
  summary: 'List alert subscriptions',
  description:
    "The channels this shop's operational alerts go to, oldest first: channel, the URL's origin (never the URL or the signing secret), the note, who subscribed and when. Active ones by default; `status=removed` lists removed ones. Subscribe with `previewAlertSubscribe`, remove with `previewAlertUnsubscribe`.",
  family: 'account',
  scope: 'diagnostics:read',
  meter: 'simple_read',
  request: {
    query: z.object({
      status: z
        .enum(ALERT_SUBSCRIPTION_STATUSES)
        .default('active')
        .openapi(q('status', '`active` (default) or `removed`.')),
      cursor: Cursor,
      limit: Limit,
    }),
  },
  response: z
    .object({
      data: z.array(AlertSubscriptionSchema).describe('Alert subscriptions, oldest first.'),
      page: PageInfo,
    })
    .openapi('AlertSubscriptionList'),
  mcp: {
    title: 'List alert subscriptions',
    description:
      "See where this shop's operational alerts are sent (webhook or Slack, by origin) and who subscribed them; removed ones with status=removed.",
  },
  run: async ({ ctx, input }) => listAlertSubscriptionsPage({ ctx, input }),
});

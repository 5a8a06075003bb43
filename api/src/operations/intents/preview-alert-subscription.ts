// POST /agent/v1/alert-subscription-intents — preview subscribing a channel to operational alerts.
import { z } from '@hono/zod-openapi';
import { defineOperation } from '../../core/types.ts';
import { previewIntent } from '../../intents/engine.ts';
import { ALERT_CHANNELS, checkAlertUrl } from '../../intents/kinds/alert-subscribe.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { ActionIntentSchema, callerOf, PREVIEW_NOTE } from './shared.ts';

export const AlertSubscriptionIntentBody = z
  .object({
    channel: z
      .enum(ALERT_CHANNELS)
      .describe(
        '`webhook`: signed per Standard Webhooks (verify with the signing secret shown at confirmation); `slack`: a Slack-compatible incoming webhook.',
      ),
    url: z
      .string()
      .min(1)
      .max(2048)
      .describe('https (http only to localhost). Stored sealed; shown only as its origin.'),
    note: z.string().max(500).optional(),
  })
  .strict()
  .openapi('AlertSubscriptionIntentRequest');

export const previewAlertSubscription = defineOperation({
  operationId: 'createAlertSubscriptionIntent',
  method: 'post',
  path: `${AGENT_API_PREFIX}/alert-subscription-intents`,
  summary: 'Preview an alert subscription',
  description: `Previews sending this shop's operational alerts (an endpoint failing, the shop held, no enabled workflow, bodies about to expire unreplayed, a secret overlap ending) to a webhook or a Slack-compatible incoming webhook. Each incident is sent once when it opens and once when it clears. Confirmation shows a webhook's signing secret once. ${PREVIEW_NOTE}`,
  family: 'account',
  kind: 'preview',
  scope: 'alert_subscribe:preview',
  meter: 'preview',
  openWorld: true,
  request: { body: AlertSubscriptionIntentBody },
  response: ActionIntentSchema,
  successStatus: 201,
  errors: [],
  mcp: {
    name: 'preview_alert_subscription',
    title: 'Preview subscribing to operational alerts',
    description:
      "Prepare sending this shop's operational alerts (failing endpoint, held shop, no enabled workflow, expiring bodies, ending secret overlap) to a signed webhook or a Slack incoming webhook. Nothing is subscribed until confirmed.",
  },
  cli: ['alerts', 'subscribe'],
  async run({ ctx, input }) {
    // The URL is sealed before it is stored with the intent (a Slack URL is a credential).
    const { url, ...rest } = input;
    const origin = checkAlertUrl(url).origin;
    return previewIntent(callerOf(ctx), 'alert_subscribe', null, {
      ...rest,
      url_sealed: ctx.services.secrets.encrypt(url),
      url_origin: origin,
    });
  },
});

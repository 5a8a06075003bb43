// POST /agent/v1/alert-subscription-intents — preview subscribing a channel to operational alerts.
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { ALERT_CHANNELS } from '../../intents/kinds/alert-subscribe.ts';
import { PreviewLifetimeField } from './shared.ts';

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
      .describe('https (http only to localhost). Stored sealed; shown only as its origin.')
      .openapi({ example: 'https://alerts.example.com/flowport' }),
    note: z.string().max(500).optional().describe('Free text to tell subscriptions apart (e.g. who owns the channel).'),
    ...PreviewLifetimeField,
  })
  .strict()
  .openapi('AlertSubscriptionIntentRequest');

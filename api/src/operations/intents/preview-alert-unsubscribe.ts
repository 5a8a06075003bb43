// POST /agent/v1/alert-subscriptions/{subscription_id}/unsubscribe-intents — preview removing an
// alert subscription (ADR 1311). This file holds the request body; the operation is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { PreviewLifetimeField } from './shared.ts';

export const AlertUnsubscribeIntentBody = z
  .strictObject({ ...PreviewLifetimeField })
  .describe('The subscription is named in the path; only the preview lifetime may be given.')
  .openapi('AlertUnsubscribeIntentRequest');

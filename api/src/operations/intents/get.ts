// GET /agent/v1/action-intents/{intent_id} — one action intent: its preview, state and outcome.
import { getIntent } from '../../intents/engine.ts';
import { defineRead } from '../define.ts';
import { ActionIntentSchema, IntentIdParams } from './shared.ts';

export const getActionIntent = defineRead({
  name: 'get_action_intent',
  path: '/action-intents/{intent_id}',
  summary: 'Read an action intent',
  description:
    'The preview (target, current config, effects, warnings, meter cost, required scope, expiry), who previewed and confirmed it, its state and result. Secrets and share links are never shown here.',
  family: 'recovery',
  scope: 'intents:read',
  meter: 'simple_read',
  request: { params: IntentIdParams },
  response: ActionIntentSchema,
  errors: ['not_found'],
  mcp: {
    title: 'Read an action intent',
    description:
      'Read one intent: what its preview said, whether it is still awaiting confirmation, who confirmed it, and what the execution did.',
  },
  run: async ({ ctx, input }) => getIntent({ ctx, input }),
});

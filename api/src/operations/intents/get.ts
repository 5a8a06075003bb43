// GET /agent/v1/action-intents/{intent_id} — one action intent: its preview, state and outcome.
import { getIntent } from '../../intents/engine.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { defineOperation } from '../../core/types.ts';
import { ActionIntentSchema, callerOf, IntentIdParams } from './shared.ts';

export const getActionIntent = defineOperation({
  operationId: 'getActionIntent',
  method: 'get',
  path: `${AGENT_API_PREFIX}/action-intents/{intent_id}`,
  summary: 'Read an action intent',
  description:
    'The preview (target, current config, effects, warnings, meter cost, required scope, expiry), who previewed and confirmed it, its state and result. Secrets and share links are never shown here.',
  family: 'recovery',
  kind: 'read',
  scope: 'intents:read',
  meter: 'simple_read',
  request: { params: IntentIdParams },
  response: ActionIntentSchema,
  errors: ['not_found'],
  mcp: {
    name: 'get_action_intent',
    title: 'Read an action intent',
    description:
      'Read one intent: what its preview said, whether it is still awaiting confirmation, who confirmed it, and what the execution did.',
  },
  cli: ['get-action-intent'],
  run: async ({ ctx, input }) => getIntent(callerOf(ctx), input.intent_id),
});

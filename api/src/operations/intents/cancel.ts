// POST /agent/v1/action-intents/{intent_id}/cancel — drop a previewed intent; nothing runs.
import { ACTIONS, executeScope, previewScope } from '../../auth/scopes.ts';
import { cancelIntent } from '../../intents/engine.ts';
import { defineNamed } from '../define.ts';
import { ActionIntentSchema, IntentIdParams } from './shared.ts';

export const cancelActionIntent = defineNamed({
  name: 'cancel_action_intent',
  method: 'post',
  path: '/action-intents/{intent_id}/cancel',
  summary: 'Cancel an action intent',
  description:
    "Cancels a previewed intent so it can never be confirmed, or stops a running bulk replay (its pending events are not replayed; those already replayed stay). Needs the kind's preview or execute scope.",
  family: 'recovery',
  kind: 'execute',
  scope: 'intents:read',
  scopeNote:
    "`intents:read` and the intent kind's preview or execute scope (e.g. `replay:preview`); `intents:read` alone cannot cancel.",
  scopeAnyOf: ACTIONS.flatMap((a) => [previewScope(a), executeScope(a)]),
  meter: null,
  // Cancelling again changes nothing more: the intent stays cancelled.
  idempotent: true,
  request: { params: IntentIdParams },
  response: ActionIntentSchema,
  errors: ['not_found', 'intent_not_confirmable', 'intent_expired'],
  mcp: {
    title: 'Cancel an action intent',
    description:
      'Withdraw a previewed action that should not run (for example after the merchant declined). Nothing is executed.',
  },
  run: async ({ ctx, input }) => cancelIntent({ ctx, input }),
});

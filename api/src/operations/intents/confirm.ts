// POST /agent/v1/action-intents/{intent_id}/confirm — run a previewed intent once.
// The registry scope (`intents:read`) only says a grant is needed; the real
// check is the intent kind's execute scope, made inside the engine once the
// intent is known. The Idempotency-Key makes retries safe.
import { ACTIONS, executeScope } from '../../auth/scopes.ts';
import { confirmIntent } from '../../intents/engine.ts';
import { defineNamed } from '../define.ts';
import { ActionIntentSchema, EVENT_REPLAY_REFUSALS, IntentIdParams } from './shared.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

export const confirmActionIntent = defineNamed({
  name: 'confirm_action_intent',
  method: 'post',
  path: '/action-intents/{intent_id}/confirm',
  summary: 'Confirm (execute) an action intent',
  description:
    "Runs a previewed intent exactly once. Needs the intent kind's execute scope (e.g. `replay:execute`, named in the intent's `required_scope`) and an `Idempotency-Key` header: the same key and request return the stored response byte for byte; the same key with a different request answers 422; a concurrent request with the key answers 409; keys are kept 24 h. If the target changed since the preview (config version, event state, another action) the intent is refused and a fresh preview is needed. Secrets and share links created by the action appear only in this response.",
  family: 'recovery',
  kind: 'execute',
  scope: 'intents:read',
  scopeNote:
    "`intents:read` and the intent kind's execute scope (the intent's `required_scope`, e.g. `replay:execute`); `intents:read` alone cannot confirm.",
  scopeAnyOf: ACTIONS.map(executeScope),
  // Executions are metered by the engine when the action actually runs, not per request.
  meter: null,
  destructive: true,
  openWorld: true,
  headers: [IDEMPOTENCY_HEADER],
  request: { params: IntentIdParams },
  response: ActionIntentSchema,
  errors: [
    'not_found',
    'idempotency_key_missing',
    'idempotency_key_reused',
    'idempotency_key_in_use',
    'intent_expired',
    'intent_not_confirmable',
    'intent_stale',
    ...EVENT_REPLAY_REFUSALS,
    'endpoint_not_archived',
    'replay_in_flight',
    'replay_limit_reached',
    'diagnostics_share_limit_reached',
    // The monthly execution cap, counted when the action runs (the request itself is not metered).
    'plan_limit_reached',
    'replay_recent_delivery',
    'event_already_recovered',
  ],
  mcp: {
    title: 'Confirm an action intent',
    description:
      "Execute a previewed action (replay, diagnostics share, endpoint change, secret rotation, test event) exactly once. Needs the intent's required_scope and an idempotency key; reuse the same key when retrying. Only confirm what a human asked for or what your grant's purpose covers.",
  },
  run: async ({ ctx, input }) =>
    confirmIntent({
      ctx,
      input: { intent_id: input.intent_id, idempotency_key: ctx.headers[IDEMPOTENCY_HEADER] },
    }) as never,
});

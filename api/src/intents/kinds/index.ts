// Every intent kind, keyed by its action (the scope vocabulary's action names).
import type { Action } from '../../auth/scopes.ts';
import type { IntentKindDef } from '../types.ts';
import { alertSubscribeKind } from './alert-subscribe.ts';
import { alertUnsubscribeKind } from './alert-unsubscribe.ts';
import { bulkReplayKind } from './bulk-replay.ts';
import { diagnosticsShareKind } from './diagnostics-share.ts';
import { endpointCreateKind } from './endpoint-create.ts';
import { endpointDeleteKind } from './endpoint-delete.ts';
import { endpointEditKind } from './endpoint-edit.ts';
import { replayKind } from './replay.ts';
import { secretRotateKind } from './secret-rotate.ts';
import { testEventKind } from './test-event.ts';

// biome-ignore lint/suspicious/noExplicitAny: each kind has its own parameter type; the engine passes the stored params.
export const INTENT_KINDS: Record<Action, IntentKindDef<any>> = {
  replay: replayKind,
  diagnostics_share: diagnosticsShareKind,
  endpoint_create: endpointCreateKind,
  endpoint_edit: endpointEditKind,
  secret_rotate: secretRotateKind,
  endpoint_delete: endpointDeleteKind,
  test_event: testEventKind,
  bulk_replay: bulkReplayKind,
  alert_subscribe: alertSubscribeKind,
  alert_unsubscribe: alertUnsubscribeKind,
};

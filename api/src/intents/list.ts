// The shop's action intents as listActionIntents pages them: newest first, filtered, with the one
// list shape (ADR 0013): a cursor sealed to the shop and this list, at an intent id.
import type { OperationContext } from '../core/types.ts';
import { isId } from '../ids.ts';
import { listIntentsWithActors } from '../reads/action-intents.ts';
import { cursorPosition, listScope, pageOf } from '../reads/paging.ts';
import { intentView } from './engine.ts';
import type { IntentKind, IntentState } from './types.ts';

export interface ListFilter {
  state?: IntentState;
  kind?: IntentKind;
  target_id?: string;
  limit: number;
  cursor?: string;
}

export async function listIntents({ ctx, input: filter }: { ctx: OperationContext; input: ListFilter }) {
  const { services, principal } = ctx;
  const now = services.now();
  const scope = listScope('action-intents', principal.shopId);
  const before = cursorPosition(services.secrets, scope, filter.cursor, (id) => isId('intent', id));
  const rows = await listIntentsWithActors(
    services.db,
    principal.shopId,
    { state: filter.state, kind: filter.kind, target_id: filter.target_id, before_id: before ?? undefined },
    now,
    filter.limit + 1,
  );
  const { rows: intents, page } = pageOf(services.secrets, scope, rows, filter.limit, (r) => r.id);
  return { data: intents.map((r) => intentView(r, now)), page };
}

// Action intents as the API shows them: each row with the names of the grants that created and
// confirmed it. A read model (action_intents joined with grants) for the engine (intents/engine.ts).
import type { IntentKind, IntentRow, IntentState } from '../intents/types.ts';
import type { Db } from '../store/db.ts';

export interface IntentRowWithActors extends IntentRow {
  created_by_name: string | null;
  created_by_kind: string | null;
  confirmed_by_name: string | null;
  confirmed_by_kind: string | null;
}

const SELECT_INTENT = `SELECT i.*, cg.actor_name AS created_by_name, cg.actor_kind AS created_by_kind,
    fg.actor_name AS confirmed_by_name, fg.actor_kind AS confirmed_by_kind
  FROM action_intents i
  LEFT JOIN grants cg ON cg.id = i.created_by_grant
  LEFT JOIN grants fg ON fg.id = i.confirmed_by_grant`;

/** One of a shop's intents with its actors, or undefined (another shop's intent is not found). */
export async function findIntentWithActors(
  db: Db,
  shopId: string,
  intentId: string,
): Promise<IntentRowWithActors | undefined> {
  return db.get<IntentRowWithActors>(`${SELECT_INTENT} WHERE i.id = ? AND i.shop_id = ?`, [intentId, shopId]);
}

export interface IntentListFilter {
  state?: IntentState;
  kind?: IntentKind;
  target_id?: string;
  /** Only intents older (by id) than this one. */
  before_id?: string;
}

/** A shop's intents, newest first, at most `limit`; `expired` and `previewed` judged at `now`. */
export async function listIntentsWithActors(
  db: Db,
  shopId: string,
  filter: IntentListFilter,
  now: number,
  limit: number,
): Promise<IntentRowWithActors[]> {
  const where: string[] = ['i.shop_id = ?'];
  const params: (string | number)[] = [shopId];
  if (filter.state === 'expired') {
    where.push(`(i.state = 'expired' OR (i.state = 'previewed' AND i.expires_at <= ?))`);
    params.push(now);
  } else if (filter.state === 'previewed') {
    where.push(`i.state = 'previewed' AND i.expires_at > ?`);
    params.push(now);
  } else if (filter.state) {
    where.push('i.state = ?');
    params.push(filter.state);
  }
  if (filter.kind) {
    where.push('i.kind = ?');
    params.push(filter.kind);
  }
  if (filter.target_id) {
    where.push('i.target_id = ?');
    params.push(filter.target_id);
  }
  if (filter.before_id) {
    where.push('i.id < ?');
    params.push(filter.before_id);
  }
  return db.all<IntentRowWithActors>(`${SELECT_INTENT} WHERE ${where.join(' AND ')} ORDER BY i.id DESC LIMIT ?`, [
    ...params,
    limit,
  ]);
}

/** Who confirmed an intent (the grant, null when it is gone) and the request that confirmed it. */
export async function intentConfirmer(
  db: Db,
  intentId: string,
): Promise<{
  grant: { id: string; actor_kind: string; actor_name: string } | null;
  requestId: string | null;
}> {
  const row = await db.get<{ id: string | null; actor_kind: string; actor_name: string; request_id: string | null }>(
    `SELECT g.id, g.actor_kind, g.actor_name, i.confirmed_request_id AS request_id
       FROM action_intents i LEFT JOIN grants g ON g.id = i.confirmed_by_grant WHERE i.id = ?`,
    [intentId],
  );
  return {
    grant: row?.id ? { id: row.id, actor_kind: row.actor_kind, actor_name: row.actor_name } : null,
    requestId: row?.request_id ?? null,
  };
}

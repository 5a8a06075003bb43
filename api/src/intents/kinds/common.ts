// Helpers the intent kinds share: shop-scoped loads (other shops' ids answer
// 404), secret-free endpoint snapshots and config diffs.
import { AppError } from '../../errors/problem.ts';
import type { StoredEvent } from '../../reads/events.ts';
import { endpointIdentity, previousSecretValidUntil } from '../../reads/endpoints.ts';
import { configFromSnake, configToSnake } from '../../services/endpoints.ts';
import { type EndpointRow, findShopEndpoint } from '../../store/tables/endpoints.ts';
import { findShopEvent } from '../../store/tables/events/intents.ts';
import type { KindContext } from '../types.ts';

/** The events table's row, body included (intents may need the body: a replay copies it). */
export type EventRow = StoredEvent;

/** Stands for an event id that is minted only at confirmation (replay, test event previews). */
export const NEW_EVENT_ID = '<new event id>';

export const iso = (ms: number | string | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();

export async function loadEvent(kc: KindContext, eventId: string | null): Promise<EventRow> {
  const ev = eventId ? await findShopEvent<EventRow>(kc.db, kc.shop.id, eventId) : undefined;
  if (!ev) throw new AppError('not_found', { detail: `No event ${eventId} in this shop.` });
  return ev;
}

export async function loadEndpoint(
  kc: KindContext,
  endpointId: string | null,
  options: { allowArchived?: boolean } = {},
): Promise<EndpointRow> {
  const row = endpointId ? await findShopEndpoint(kc.db, kc.shop.id, endpointId) : undefined;
  if (!row) throw new AppError('not_found', { detail: `No endpoint ${endpointId} in this shop.` });
  if (row.deleted_at !== null) {
    throw new AppError('endpoint_archived', {
      detail: `Endpoint ${row.id} was permanently deleted on ${iso(row.deleted_at)}; only its tombstone remains.`,
      reason: 'The endpoint is deleted.',
    });
  }
  if (row.status === 'archived' && !options.allowArchived) {
    throw new AppError('endpoint_archived', {
      detail: `Endpoint ${row.id} was archived on ${iso(row.archived_at)}; it accepts no events and no actions except permanent delete.`,
      reason: 'The endpoint is archived.',
    });
  }
  return row;
}

/** The endpoint as anyone may see it: configuration without secret material (last 4 characters only). */
export function endpointSnapshot(row: EndpointRow, now: number) {
  return {
    ...endpointIdentity(row),
    status: row.status,
    config_version: Number(row.config_version),
    // As the API spells it (snake_case), whatever the stored row's age.
    config: configToSnake(configFromSnake(JSON.parse(row.config_json))),
    secret_last4: row.secret_last4,
    previous_secret_valid_until: previousSecretValidUntil(row, now),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    archived_at: iso(row.archived_at),
  };
}

export interface DiffEntry {
  path: string;
  before: unknown;
  after: unknown;
}

/** Leaf-level differences between two JSON values (arrays compared whole). */
export function jsonDiff(before: unknown, after: unknown, path = ''): DiffEntry[] {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(before) && isObj(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => jsonDiff(before[k], after[k], path ? `${path}.${k}` : k));
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  return [{ path: path || '(root)', before: before ?? null, after: after ?? null }];
}

// The kind of one of a shop's action intents, for naming the scope a confirmation or cancellation
// needs before it runs (MCP step-up, ADR 1430). Other shops' intents are not found, as everywhere.
import type { Services } from '../core/types.ts';
import { findIntentKind } from '../store/tables/intents.ts';

export async function intentKindInShop(db: Services['db'], shopId: string, intentId: string): Promise<string | null> {
  return (await findIntentKind(db, shopId, intentId)) ?? null;
}

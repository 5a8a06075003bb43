// Small usage lookups the reads need (remaining allowance of a meter this month).
import type { Db } from '../store/db.ts';
import { limitsForShop, meterCap, type UsageMeter, usageFor } from '../usage/meters.ts';

export async function consumeCapRemaining(db: Db, shopId: string, meter: UsageMeter, now: number): Promise<number> {
  const limits = await limitsForShop(db, shopId);
  const used = (await usageFor(db, shopId, now))[meter];
  return Math.max(0, meterCap(limits, meter) - used);
}

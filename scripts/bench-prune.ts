// npm run bench:prune [-- --store sqlite|postgres --keys 1000000]
// What the retention sweep's share of the dedupe-key walk costs (ADR 0314, amended): a store with
// `--keys` dedupe keys, half of them past every window, then sweeps of the default share (20
// statements of 1,000 keys) timed one by one until the walk has gone round once. Prints the load
// average, the statements' p50/p99/max (each holds SQLite's write lock for its duration) and the
// sweeps a full walk takes.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../api/src/store/open.ts';
import { migrate } from '../api/src/store/migrate.ts';
import {
  DEDUPE_PRUNE_CHUNK,
  DEDUPE_PRUNE_CHUNKS_PER_SWEEP,
  LONGEST_DEDUPE_WINDOW_MS,
  pruneDedupeKeys,
  type DedupeCursor,
} from '../api/src/store/tables/events/dedupe-keys.ts';
import { insertMany } from '../api/src/store/db.ts';
import { createPgSchema } from '../tests/helpers/store.ts';

const { values } = parseArgs({
  options: { store: { type: 'string', default: 'sqlite' }, keys: { type: 'string', default: '1000000' } },
});
const KEYS = Number(values.keys);
console.log(
  `bench:prune (${values.store}, ${KEYS} keys) — load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);
const dir = mkdtempSync(join(tmpdir(), 'flowport-bench-prune-'));
const pg = values.store === 'postgres' ? await createPgSchema('bench_prune') : null;
const db = await openStore({ dataDir: dir, databaseUrl: pg?.url ?? null });
try {
  await migrate(db);
  const now = Date.now();
  const batch = 5_000;
  for (let i = 0; i < KEYS; i += batch) {
    const rows = Array.from({ length: Math.min(batch, KEYS - i) }, (_, j) => {
      const n = i + j;
      return [
        `ep_${String(n % 50).padStart(4, '0')}`,
        `ext_${n}`,
        'shop_bench',
        `evt_${n}`,
        n % 2 === 0 ? now - LONGEST_DEDUPE_WINDOW_MS - 3_600_000 : now - 3_600_000,
        86_400_000,
      ];
    });
    await db.tx(async (tx) => {
      await insertMany(
        tx,
        'dedupe_keys',
        ['endpoint_id', 'external_event_id', 'shop_id', 'event_id', 'received_at', 'window_ms'],
        rows,
      );
    });
  }
  const times: number[] = [];
  let cursor: DedupeCursor = null;
  let pruned = 0;
  let statements = 0;
  do {
    const t0 = process.hrtime.bigint();
    const step = await pruneDedupeKeys(db, now, cursor);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    pruned += step.pruned;
    cursor = step.next;
    statements++;
  } while (cursor !== null);
  times.sort((a, b) => a - b);
  const q = (p: number) => (times[Math.min(times.length - 1, Math.floor(p * times.length))] as number).toFixed(2);
  console.log(
    `one walk: ${statements} statements of ${DEDUPE_PRUNE_CHUNK} keys (${Math.ceil(statements / DEDUPE_PRUNE_CHUNKS_PER_SWEEP)} sweeps), ${pruned} keys removed; per statement p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms; a sweep's share ≈ ${((times.reduce((a, b) => a + b, 0) / statements) * DEDUPE_PRUNE_CHUNKS_PER_SWEEP).toFixed(1)} ms`,
  );
  console.log(
    `load average after: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await db.close();
  await pg?.drop();
  rmSync(dir, { recursive: true, force: true });
}

// The SQLite adapter's durability on a real database file: a write resolves only after
// a WAL sync that covers its commit; checkpoints run in their own thread, copy while writes go
// on, complete (holding writes briefly) once the WAL reaches its size, and so keep the WAL from
// growing; a failed sync stops all later writes.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../api/src/ids.ts';
import { CHECKPOINT_POLICY, SqliteDb } from '../../api/src/store/sqlite.ts';
import { runToEnd } from '../helpers/process.ts';
import { startTestServer, tempDir } from '../helpers/runtime.ts';
import { freshSqlite, INSERT_SHOP, shopCount } from '../helpers/sqlite.ts';

describe('sqlite durability', () => {
  it('settles exec() on a brand-new file before anything was written', async () => {
    const db = new SqliteDb(join(tempDir(), 'flowport.db'));
    await db.exec('SELECT 1');
    expect(db.syncStats.syncedThrough).toBe(db.syncStats.commits);
    await db.close();
  });

  it('uses WAL with its own WAL sync: every write resolves only after a sync that covers its commit', async () => {
    const { db } = await freshSqlite();
    expect(db.raw.pragma('journal_mode', { simple: true })).toBe('wal');
    // NORMAL: COMMIT does not fsync; the adapter syncs the WAL before resolving.
    expect(db.raw.pragma('synchronous', { simple: true })).toBe(1);
    // Statement journals (and temporary tables) in memory, not a file per statement (ADR 0313).
    expect(db.raw.pragma('temp_store', { simple: true })).toBe(2);
    const uncovered: number[] = [];
    await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        let commitNo = 0;
        if (i % 3 === 0) {
          // An autocommit write is a commit of its own, numbered after every commit made before the call.
          commitNo = db.syncStats.commits + 1;
          await db.run(INSERT_SHOP, [newId('shop'), `s${i}.myshopify.com`]);
        } else {
          await db.tx(async (tx) => {
            await tx.run(INSERT_SHOP, [newId('shop'), `s${i}.myshopify.com`]);
            // Transactions are serialised, so this one commits next.
            commitNo = db.syncStats.commits + 1;
          });
        }
        if (db.syncStats.syncedThrough < commitNo) uncovered.push(commitNo);
      }),
    );
    expect(uncovered).toEqual([]);
    expect(await shopCount(db)).toBe(60);
    expect(db.syncStats.syncs).toBeGreaterThan(0);
    // Reads commit nothing and wait for no sync.
    const before = { ...db.syncStats };
    await db.get('SELECT COUNT(*) AS n FROM shops');
    expect(db.syncStats).toEqual(before);
    await db.close();
  });
});

describe('sqlite checkpoints off the event loop', () => {
  const ROW = 'x'.repeat(2000);

  /** The file passes SQLite's integrity check, and reopened it holds every row. Closes `db`. */
  async function expectIntactAfterReopen(db: SqliteDb, file: string, rows: number): Promise<void> {
    expect(db.raw.pragma('integrity_check', { simple: true })).toBe('ok');
    await db.close();
    const again = new SqliteDb(file);
    expect(await again.get('SELECT COUNT(*) AS n FROM blobs')).toEqual({ n: rows });
    await again.close();
  }

  /** Rows `writeMany(commits)` inserts: every 4th commit one row, the others 20. */
  const rowsFor = (commits: number) => Math.ceil(commits / 4) + (commits - Math.ceil(commits / 4)) * 20;

  async function writeMany(db: SqliteDb, commits: number): Promise<void> {
    await Promise.all(
      Array.from({ length: commits }, async (_, i) => {
        if (i % 4 === 0) {
          await db.run('INSERT INTO blobs (b) VALUES (?)', [ROW]);
          return;
        }
        await db.tx(async (tx) => {
          for (let j = 0; j < 20; j++) await tx.run('INSERT INTO blobs (b) VALUES (?)', [ROW]);
        });
      }),
    );
  }

  /** WAL frames (header and page) on disk now. */
  const walFrames = (file: string, db: SqliteDb) =>
    (statSync(`${file}-wal`).size - 32) / (Number(db.raw.pragma('page_size', { simple: true })) + 24);

  it('checkpoints in its thread, each checkpoint completes, and the WAL rewinds under continuous writes', async () => {
    // Every pass completes: a WAL of any size rewinds.
    const { db, file } = await freshSqlite({ rewindAtFrames: 1 });
    await db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, b TEXT NOT NULL)');
    // The connection never checkpoints inside a COMMIT.
    expect(db.raw.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    // Ten waves of writes; each wave's 32nd commit starts a checkpoint while the wave goes on.
    const wave = CHECKPOINT_POLICY.everyCommits + 8;
    for (let i = 0; i < 10; i++) {
      await writeMany(db, wave);
      await db.checkpointsSettled();
    }
    const rows = rowsFor(wave) * 10;
    expect(await db.get('SELECT COUNT(*) AS n FROM blobs')).toEqual({ n: rows });
    const st = db.checkpointStats;
    expect(st.fallback).toBeNull();
    expect(st.passes).toBe(10);
    // Every pass that found frames completed. Rarely a pass finds none (seen once in CI; most
    // likely it read the WAL header while a write restarting the WAL had not committed yet).
    expect(st.emptyPasses).toBeLessThanOrEqual(1);
    expect(st.checkpoints).toBe(st.passes - st.emptyPasses);
    expect(st.incomplete).toBe(0);
    // About 13 MB went through the WAL; rewinding keeps it to about one wave.
    const written = rows * ROW.length;
    expect(statSync(`${file}-wal`).size).toBeLessThan(written / 3);
    await expectIntactAfterReopen(db, file, rows);
  });

  it('copies without holding writes until the WAL reaches rewindAtFrames, then completes once and rewinds', async () => {
    const rewindAtFrames = 1_500;
    const { db, file } = await freshSqlite({ rewindAtFrames });
    await db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, b TEXT NOT NULL)');
    const wave = CHECKPOINT_POLICY.everyCommits + 8;
    const maxWaves = 40;
    let waves = 0;
    let largestWave = 0;
    // A pass that copies every frame before the next write lets SQLite itself rewind the WAL at
    // that write (no hold needed): the frames a pass finds then drop. How often that happens
    // depends on how the thread and the writes interleave (on a loaded machine, every wave).
    let selfRewinds = 0;
    let framesAtLastPass = 0;
    // Waves until one checkpoint has completed: before it, passes copy and writes are never held.
    while (db.checkpointStats.checkpoints === 0 && waves < maxWaves) {
      const before = walFrames(file, db);
      await writeMany(db, wave);
      await db.checkpointsSettled();
      largestWave = Math.max(largestWave, walFrames(file, db) - before);
      waves++;
      if (db.checkpointStats.checkpoints === 0) {
        expect(db.checkpointStats.totalMs).toBe(0);
        expect(db.checkpointStats.lastFrames).toBeLessThan(rewindAtFrames);
        if (db.checkpointStats.lastFrames < framesAtLastPass) selfRewinds++;
        framesAtLastPass = db.checkpointStats.lastFrames;
      }
    }
    const st = db.checkpointStats;
    expect(st.fallback).toBeNull();
    expect(st.incomplete).toBe(0);
    // Several copy passes ran before the WAL reached its size (or it never did); none held writes
    // until then, and the file grows past the size by at most two waves: the pass that finds the
    // size may start just before the WAL reaches it, and writes go on until the next pass and its hold.
    expect(st.passes).toBeGreaterThan(1);
    expect(walFrames(file, db)).toBeLessThanOrEqual(rewindAtFrames + 2 * largestWave);
    if (st.checkpoints === 0) {
      // The passes kept up all along: SQLite rewound the WAL each time, writes were never held.
      expect(selfRewinds, `no checkpoint in ${maxWaves} waves, and the WAL never rewound by itself`).toBeGreaterThan(0);
      expect(st.totalMs).toBe(0);
      expect(st.maxFrames).toBeLessThan(rewindAtFrames);
      await expectIntactAfterReopen(db, file, rowsFor(wave) * waves);
      return;
    }
    expect(st.checkpoints).toBe(1);
    expect(st.maxFrames).toBeGreaterThanOrEqual(rewindAtFrames);
    // The next write rewinds it: new frames go to the start, so the file does not grow.
    const size = statSync(`${file}-wal`).size;
    await db.run('INSERT INTO blobs (b) VALUES (?)', [ROW]);
    expect(statSync(`${file}-wal`).size).toBe(size);
    const [r] = db.raw.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
    expect(r?.log).toBeLessThan(10);
    await expectIntactAfterReopen(db, file, rowsFor(wave) * waves + 1);
  });

  it('checkpoints safely while another process (e.g. the CLI) writes to the same file', async () => {
    // Every pass completes here, so checkpoints hold this process's writes while the other writes.
    const { db, file } = await freshSqlite({ rewindAtFrames: 1 });
    await db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, b TEXT NOT NULL)');
    // The other process: its own adapter (and checkpoint thread) on the same file.
    const otherCommits = 150;
    const script = `
      import { SqliteDb } from './api/src/store/sqlite.ts';
      const db = new SqliteDb(process.env.DB_FILE);
      for (let i = 0; i < ${otherCommits}; i++) {
        await db.tx(async (tx) => { for (let j = 0; j < 20; j++) await tx.run('INSERT INTO blobs (b) VALUES (?)', ['${ROW.slice(0, 100)}']); });
      }
      await db.close();
      console.log('other done');
    `;
    const other = runToEnd(['--input-type=module', '-e', script], { DB_FILE: file });
    let otherEnded = false;
    void other.then(() => {
      otherEnded = true;
    });
    // This process keeps writing (and checkpointing) until the other one has finished.
    const wave = CHECKPOINT_POLICY.everyCommits + 8;
    let waves = 0;
    while (!otherEnded || waves < 6) {
      await writeMany(db, wave);
      waves++;
    }
    const done = await other;
    expect(done.out).toContain('other done');
    expect(done.code).toBe(0);
    await db.checkpointsSettled();
    expect(db.checkpointStats.fallback).toBeNull();
    expect(db.checkpointStats.checkpoints).toBeGreaterThan(0);
    expect(db.failure()).toBeNull();
    const rows = rowsFor(wave) * waves + otherCommits * 20;
    expect(await db.get('SELECT COUNT(*) AS n FROM blobs')).toEqual({ n: rows });
    await expectIntactAfterReopen(db, file, rows);
  });

  it('moves checkpoints back into the connection when the thread fails, and writing goes on', async () => {
    const { db } = await freshSqlite();
    await db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, b TEXT NOT NULL)');
    await writeMany(db, CHECKPOINT_POLICY.everyCommits + 4);
    await db.checkpointsSettled();
    expect(db.checkpointStats.passes).toBeGreaterThan(0);
    // End the thread under the adapter, as a crash of it would.
    const internals = db as unknown as { checkpointer: { worker: { terminate(): Promise<number> } } | null };
    await internals.checkpointer?.worker.terminate();
    await writeMany(db, CHECKPOINT_POLICY.everyCommits * 2);
    await db.checkpointsSettled();
    expect(db.checkpointStats.fallback).toMatch(/exited/);
    expect(db.raw.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    const rows = rowsFor(CHECKPOINT_POLICY.everyCommits + 4) + rowsFor(CHECKPOINT_POLICY.everyCommits * 2);
    expect(await db.get('SELECT COUNT(*) AS n FROM blobs')).toEqual({ n: rows });
    expect(db.failure()).toBeNull();
    await db.close();
  });
});

describe('sqlite WAL sync failure', () => {
  it('fails the write whose sync failed and writes nothing more; reads go on; failure() says why', async () => {
    const { db } = await freshSqlite();
    await db.run(INSERT_SHOP, [newId('shop'), 'ok.myshopify.com']);
    expect(db.failure()).toBeNull();
    // Fault injection: close the adapter's WAL handle under it, so the next fdatasync really fails.
    await (db as unknown as { wal: { close(): Promise<void> } }).wal.close();
    await expect(db.run(INSERT_SHOP, [newId('shop'), 'lost.myshopify.com'])).rejects.toThrow(
      /Syncing the SQLite WAL failed/,
    );
    await expect(
      db.tx(async (tx) => {
        await tx.run(INSERT_SHOP, [newId('shop'), 'later.myshopify.com']);
      }),
    ).rejects.toThrow(/writes are refused until Flowport restarts/);
    expect(db.failure()).toMatch(/Syncing the SQLite WAL failed/);
    await expect(db.run(INSERT_SHOP, [newId('shop'), 'auto.myshopify.com'])).rejects.toThrow(/refused/);
    // The failed write had committed (its request was answered with an error); nothing later ran.
    expect(await shopCount(db)).toBe(2);
    (db as unknown as { wal: null }).wal = null;
    await db.close();
  });

  it('turns /readyz unready (store: false) once a WAL sync has failed', async () => {
    const server = await startTestServer({ store: 'sqlite' });
    try {
      const storeCheck = async () =>
        ((await (await fetch(`${server.url}/readyz`)).json()) as { checks: { store: boolean } }).checks.store;
      expect(await storeCheck()).toBe(true);
      const db = server.runtime.services.db as SqliteDb;
      await db.run(INSERT_SHOP, [newId('shop'), 'ready.myshopify.com']);
      await (db as unknown as { wal: { close(): Promise<void> } }).wal.close();
      await expect(db.run(INSERT_SHOP, [newId('shop'), 'x.myshopify.com'])).rejects.toThrow(/WAL failed/);
      expect(await storeCheck()).toBe(false);
      (db as unknown as { wal: null }).wal = null;
    } finally {
      await server.close();
    }
  });
});

describe('sqlite commit pipelining (TxOptions.onCommit)', () => {
  it('reports the commit before the sync and resolves after it; the next transaction overlaps the sync', async () => {
    const { db } = await freshSqlite();
    const before = db.syncStats.commits;
    expect(db.syncStats.syncedThrough).toBe(before);
    const order: string[] = [];
    let syncedAtCommit = -1;
    let second: Promise<void> | null = null;
    await db.tx(
      async (tx) => {
        await tx.run(INSERT_SHOP, [newId('shop'), 'first.myshopify.com']);
      },
      {
        onCommit: () => {
          order.push('commit 1');
          syncedAtCommit = db.syncStats.syncedThrough;
          // Started from onCommit, as the group committer does: it may commit before the first is synced.
          second = db.tx(
            async (tx) => {
              await tx.run(INSERT_SHOP, [newId('shop'), 'second.myshopify.com']);
            },
            { onCommit: () => order.push('commit 2') },
          );
        },
      },
    );
    order.push('resolved 1');
    await second;
    order.push('resolved 2');
    // At its commit the first transaction was not yet synced; by its resolution it was.
    expect(syncedAtCommit).toBe(before);
    expect(db.syncStats.commits).toBe(before + 2);
    expect(order.indexOf('commit 1')).toBeLessThan(order.indexOf('resolved 1'));
    expect(order.indexOf('commit 2')).toBeLessThan(order.indexOf('resolved 2'));
    expect(db.syncStats.syncedThrough).toBe(db.syncStats.commits);
    expect(await shopCount(db)).toBe(2);
    await db.close();
  });

  it('a failed transaction reports no commit and writes nothing', async () => {
    const { db } = await freshSqlite();
    let committed = false;
    await expect(
      db.tx(
        async (tx) => {
          await tx.run(INSERT_SHOP, [newId('shop'), 'x.myshopify.com']);
          throw new Error('boom');
        },
        { onCommit: () => (committed = true) },
      ),
    ).rejects.toThrow('boom');
    expect(committed).toBe(false);
    expect(await shopCount(db)).toBe(0);
    await db.close();
  });
});

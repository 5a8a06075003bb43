// The group committer over a real SQLite file: concurrent work shares transactions,
// every item settles only after its batch is durable, one failing item fails alone,
// and a batch that committed but could not be made durable is never written twice.
import { describe, expect, it } from 'vitest';
import { newId } from '../../api/src/ids.ts';
import { GroupCommitter } from '../../api/src/store/committer.ts';
import type { Db, TxOptions } from '../../api/src/store/db.ts';
import type { SqliteDb } from '../../api/src/store/sqlite.ts';
import { freshSqlite, INSERT_SHOP, shopCount } from '../helpers/sqlite.ts';

async function freshDb(): Promise<SqliteDb> {
  return (await freshSqlite()).db;
}

describe('group committer', () => {
  it('shares transactions between concurrent items and settles each only once its batch is durable', async () => {
    const db = await freshDb();
    const committer = new GroupCommitter(db);
    const notDurable: number[] = [];
    await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        let commitNo = 0;
        await committer.submit(async (tx) => {
          await tx.run(INSERT_SHOP, [newId('shop'), `c${i}.myshopify.com`]);
          commitNo = db.syncStats.commits + 1;
        });
        if (db.syncStats.syncedThrough < commitNo) notDurable.push(i);
      }),
    );
    expect(notDurable).toEqual([]);
    expect(await shopCount(db)).toBe(300);
    expect(committer.stats.items).toBe(300);
    expect(committer.stats.batches).toBeLessThan(300);
    await committer.drain();
    await db.close();
  });

  it('fails only the item that throws; the rest of its batch is written', async () => {
    const db = await freshDb();
    const committer = new GroupCommitter(db);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        committer.submit(async (tx) => {
          await tx.run(INSERT_SHOP, [newId('shop'), `f${i}.myshopify.com`]);
          if (i === 7) throw new Error('item 7 is bad');
          return i;
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect((results[7] as PromiseRejectedResult).reason).toMatchObject({ message: 'item 7 is bad' });
    expect(await shopCount(db)).toBe(19);
    expect(await shopCount(db, 'f7.%')).toBe(0);
    await db.close();
  });

  it('takes results returned without a promise: each item sees the earlier ones of its batch, and one that throws fails alone', async () => {
    const db = await freshDb();
    const committer = new GroupCommitter(db);
    // Sync work, as intake's accepted requests run once their batch's shared reads are made: each
    // counts what the batch's earlier items left in its scratch. Submitted in one turn: one batch.
    const work = (i: number) =>
      committer.submit((_tx, batch) => {
        if (i === 5) throw new Error('item 5 is bad');
        const seen = (batch.scratch.get('seen') as number | undefined) ?? 0;
        batch.scratch.set('seen', seen + 1);
        return seen;
      });
    const clean = await Promise.all(Array.from({ length: 20 }, (_, i) => work(i + 100)));
    expect(clean).toEqual([...Array(20).keys()]);
    // A sync throw rolls its batch back like an async one: the rest run again alone and succeed.
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => work(i)));
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect((results[5] as PromiseRejectedResult).reason).toMatchObject({ message: 'item 5 is bad' });
    expect(committer.stats.retriedBatches).toBe(1);
    await db.close();
  });

  it('rejects every item of a batch that committed but was not made durable, without writing it again', async () => {
    const real = await freshDb();
    let failSyncs = true;
    // Fault injection around the real store: the commit happens, then the durability step fails.
    const flaky: Db = {
      dialect: real.dialect,
      all: (sql, params) => real.all(sql, params),
      get: (sql, params) => real.get(sql, params),
      run: (sql, params) => real.run(sql, params),
      exec: (sql) => real.exec(sql),
      close: () => real.close(),
      async tx<T>(fn: (tx: Db) => Promise<T>, options?: TxOptions): Promise<T> {
        const out = await real.tx(fn, options);
        if (failSyncs) throw new Error('sync failed');
        return out;
      },
    };
    const committer = new GroupCommitter(flaky);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        committer.submit(async (tx) => {
          await tx.run(INSERT_SHOP, [newId('shop'), `d${i}.myshopify.com`]);
        }),
      ),
    );
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    // Written once by the committed batch, not again by a retry.
    expect(await shopCount(real, 'd%')).toBe(10);
    for (let i = 0; i < 10; i++) expect(await shopCount(real, `d${i}.%`)).toBe(1);
    failSyncs = false;
    await committer.submit(async (tx) => {
      await tx.run(INSERT_SHOP, [newId('shop'), 'after.myshopify.com']);
    });
    expect(await shopCount(real)).toBe(11);
    await real.close();
  });
});

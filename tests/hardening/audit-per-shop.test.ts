// Issue 24 point 6: each tenant sees only its own audit. GET /agent/v1/audit shows a per-shop
// sequence and a per-shop hash chain (no global seq, no other shop's hash), which the shop can
// verify from the entries alone, and `flowport audit verify --shop` verifies in the store; the
// global chain stays whole for the operator. Runs on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendAudit,
  backfillShopChains,
  type ShopAuditEntryView,
  verifyAuditChain,
  verifyShopAuditChain,
  verifyShopAuditEntries,
} from '../../api/src/audit/log.ts';
import { createGrant } from '../../api/src/auth/grants.ts';
import { createShop } from '../../api/src/services/shops.ts';
import { flowport } from '../cli/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

let s: TestServer;
const shops: { id: string; token: string }[] = [];

beforeAll(async () => {
  s = await startTestServer({ worker: false });
  const services = s.runtime.services;
  for (const name of ['a', 'b']) {
    const shop = await createShop(services, {
      domain: `audit-${name}-${Math.random().toString(36).slice(2, 8)}.myshopify.com`,
      sandbox: true,
    });
    const grant = await createGrant(services, {
      shopId: shop.id,
      tier: 'admin_assistant',
      actorKind: 'agent',
      actorName: `agent ${name}`,
      expiresInMs: 86_400_000,
    });
    shops.push({ id: shop.id, token: grant.token });
  }
  // Interleaved entries of both shops (and shopless ones), so each shop's rows have gaps in the global seq.
  for (let i = 0; i < 25; i++) {
    const shop = shops[i % 3 === 0 ? 1 : 0] as { id: string };
    await appendAudit(services.db, {
      shopId: i % 7 === 6 ? null : shop.id,
      actor: { kind: 'system', name: 'test' },
      action: 'test.entry',
      targetType: 'thing',
      targetId: `t_${i}`,
      outcome: 'success',
      details: { i, nested: { ok: true, list: [1, 'two', null] }, text: 'ünïcödé ✓' },
    });
  }
});
afterAll(async () => {
  await s?.close();
});

async function allEntries(token: string, limit = 4): Promise<ShopAuditEntryView[]> {
  const out: ShopAuditEntryView[] = [];
  let cursor: string | null = null;
  for (;;) {
    const url = `${s.url}/agent/v1/audit?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    const page = (await r.json()) as { data: ShopAuditEntryView[]; page: { next_cursor: string | null } };
    out.push(...page.data);
    cursor = page.page.next_cursor;
    if (!cursor) return out;
  }
}

describe('the audit log a shop sees', () => {
  it('is its own chain: seq 1..n without gaps, verifiable from the entries, no global seq or foreign hash', async () => {
    const db = s.runtime.services.db;
    const globalRows = await db.all<{ seq: number; hash: string; shop_id: string | null }>(
      'SELECT seq, hash, shop_id FROM audit_log',
    );
    for (const shop of shops) {
      const entries = await allEntries(shop.token);
      expect(entries.length).toBeGreaterThan(5);
      expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => entries.length - i));
      expect(verifyShopAuditEntries(shop.id, entries)).toMatchObject({ ok: true, checked: entries.length });
      const otherHashes = new Set(globalRows.filter((r) => r.shop_id !== shop.id).map((r) => r.hash));
      const globalHashes = new Set(globalRows.map((r) => r.hash));
      for (const e of entries) {
        expect(otherHashes.has(e.prev_hash), e.id).toBe(false);
        expect(globalHashes.has(e.hash), e.id).toBe(false);
      }
      // Any page on its own verifies too (its links and hashes).
      const firstPage = entries.slice(0, 4);
      expect(verifyShopAuditEntries(shop.id, firstPage).ok).toBe(true);
    }
    expect((await verifyAuditChain(db)).ok).toBe(true);
  });

  it('an entry edited in the store breaks that shop’s chain (API and `flowport audit verify --shop`), not the other’s', async () => {
    const db = s.runtime.services.db;
    const [a, b] = shops as [{ id: string; token: string }, { id: string; token: string }];
    const before = await flowport(['audit', 'verify', '--shop', a.id, '--json'], { env: s.storeEnv });
    expect(before.code, before.stderr).toBe(0);
    expect(before.json).toMatchObject({ ok: true, shop_id: a.id });
    const victim = await db.get<{ seq: number }>('SELECT seq FROM audit_log WHERE shop_id = ? AND shop_seq = 3', [
      a.id,
    ]);
    await db.run('UPDATE audit_log SET details_json = ? WHERE seq = ?', ['{"i":-1}', Number(victim?.seq)]);
    const broken = verifyShopAuditEntries(a.id, await allEntries(a.token, 50));
    expect(broken).toMatchObject({ ok: false, broken: { seq: 3, problem: 'hash_mismatch' } });
    const cli = await flowport(['audit', 'verify', '--shop', a.id], { env: s.storeEnv });
    expect(cli.code).toBe(1);
    expect(cli.json).toMatchObject({ ok: false, shop_id: a.id, broken: { seq: 3, problem: 'hash_mismatch' } });
    const other = await flowport(['audit', 'verify', '--shop', b.id], { env: s.storeEnv });
    expect(other.code, other.stderr).toBe(0);
    expect((await verifyShopAuditChain(db, b.id)).ok).toBe(true);
    const deleted = await db.get<{ seq: number }>('SELECT seq FROM audit_log WHERE shop_id = ? AND shop_seq = 5', [
      b.id,
    ]);
    await db.run('DELETE FROM audit_log WHERE seq = ?', [Number(deleted?.seq)]);
    expect(await verifyShopAuditChain(db, b.id)).toMatchObject({ ok: false, broken: { seq: 5, problem: 'seq_gap' } });
    expect(verifyShopAuditEntries(b.id, await allEntries(b.token, 50))).toMatchObject({
      ok: false,
      broken: { problem: 'seq_gap' },
    });
  });

  it('entries written before the per-shop chain are chained by the migration, in global order', async () => {
    const db = s.runtime.services.db;
    const shop = await createShop(s.runtime.services, {
      domain: `audit-old-${Math.random().toString(36).slice(2, 8)}.myshopify.com`,
      sandbox: true,
    });
    for (let i = 0; i < 6; i++)
      await appendAudit(db, {
        shopId: shop.id,
        actor: { kind: 'system', name: 't' },
        action: 'old',
        outcome: 'success',
      });
    const first = await verifyShopAuditChain(db, shop.id);
    await db.run('UPDATE audit_log SET shop_seq = NULL, shop_prev_hash = NULL, shop_hash = NULL WHERE shop_id = ?', [
      shop.id,
    ]);
    expect(await db.tx((tx) => backfillShopChains(tx))).toBe(6);
    expect(await verifyShopAuditChain(db, shop.id)).toEqual(first);
    expect(first).toMatchObject({ ok: true, checked: 6, lastSeq: 6 });
  });
});

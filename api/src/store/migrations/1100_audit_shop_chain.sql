-- Each shop's audit entries form their own hash chain (issue 24): shop_seq counts 1, 2, 3 … per
-- shop, shop_prev_hash is the hash of the shop's previous entry and shop_hash the hash of this one
-- over the shop-visible columns (audit/log.ts shopAuditHash). GET /agent/v1/audit shows only
-- these, so a tenant sees no global position and no other shop's hash, and can verify its own
-- chain; the global chain (seq, prev_hash, hash) stays for the operator. Rows written before this
-- migration are chained by migrate.ts right after it, in the same transaction.
ALTER TABLE audit_log ADD COLUMN shop_seq BIGINT;
ALTER TABLE audit_log ADD COLUMN shop_prev_hash TEXT;
ALTER TABLE audit_log ADD COLUMN shop_hash TEXT;
CREATE UNIQUE INDEX audit_shop_seq ON audit_log (shop_id, shop_seq) WHERE shop_seq IS NOT NULL;

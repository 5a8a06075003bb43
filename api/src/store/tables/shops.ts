// Shops: the merchant's store, its Admin API token and availability, its Shopify bucket, and Flow's trigger lifecycle per shop.
// Owns: shops, shop_buckets, flow_trigger_lifecycle. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).

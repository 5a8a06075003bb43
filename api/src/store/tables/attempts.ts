// Attempts: one row per handoff try to Shopify Flow.
// Owns: attempts. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).

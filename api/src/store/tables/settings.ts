// Store settings: facts the store keeps about itself (served URL, key check, disk probes, data migrations).
// Owns: store_settings. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).

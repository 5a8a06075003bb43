// Usage: monthly meters and per-minute rate windows.
// Owns: usage_counters, rate_windows. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).

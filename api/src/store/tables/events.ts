// Events: what intake accepted, replays and test events, their lifecycle, retention and erasure.
// Owns: events. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).

// Receipts: the durable acknowledgement of each sender request, and the tallies of refused ones.
// Owns: receipts, intake_rejection_tallies. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).

// Grants: the scoped tokens a human issues to an agent or a person.
// Owns: grants. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).

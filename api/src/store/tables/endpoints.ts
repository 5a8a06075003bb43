// Endpoints: sender lanes and their versioned configuration.
// Owns: endpoints, endpoint_versions. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).

// The OAuth authorization server's state: registered clients, consents, codes and tokens.
// Owns: oauth_clients, oauth_codes, oauth_consents, oauth_tokens. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).

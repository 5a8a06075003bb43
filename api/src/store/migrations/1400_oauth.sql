-- Flowport as the OAuth 2.1 authorization server for agents (ADR 1400). Portable subset of SQLite
-- and PostgreSQL. Every secret (codes, access and refresh tokens) is stored as its SHA-256 only.

-- Clients: registered with RFC 7591 (kind 'dynamic', client_id minted here) or known by a Client ID
-- Metadata Document (kind 'metadata_document', client_id is the document's https URL; the row is
-- the cache of the last fetch).
CREATE TABLE oauth_clients (
  client_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  client_name TEXT NOT NULL,
  redirect_uris_json TEXT NOT NULL,
  metadata_json TEXT NOT NULL,
  registered_from TEXT,
  created_at BIGINT NOT NULL,
  fetched_at BIGINT NOT NULL
);
CREATE INDEX oauth_clients_registered_from ON oauth_clients (registered_from, created_at);

-- An authorization request the consent page is showing to one merchant session: the form posts its
-- id back, so the request cannot be altered in the browser and the consent expires.
CREATE TABLE oauth_consents (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  client_id TEXT NOT NULL,
  request_json TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);

-- Authorization codes: one use, a few minutes, bound to client, redirect URI, PKCE challenge,
-- resource and the grant the merchant created on consent.
CREATE TABLE oauth_codes (
  code_hash TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  grant_id TEXT NOT NULL REFERENCES grants(id),
  redirect_uri TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  resource TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);

-- Access and refresh tokens of a grant. A family is one authorization's chain of refresh
-- rotations; reusing a rotated refresh token revokes the whole family.
CREATE TABLE oauth_tokens (
  token_hash TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  family_id TEXT NOT NULL,
  grant_id TEXT NOT NULL REFERENCES grants(id),
  client_id TEXT NOT NULL,
  resource TEXT NOT NULL,
  token_hint TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  rotated_at BIGINT,
  revoked_at BIGINT
);
CREATE INDEX oauth_tokens_family ON oauth_tokens (family_id);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);

-- How a grant's holder authenticates: NULL for a grant token (CLI, merchant page), 'oauth' for a
-- grant created on the consent page, whose holder uses OAuth access tokens (the grant token minted
-- with it is never shown to anyone).
ALTER TABLE grants ADD COLUMN issued_via TEXT;

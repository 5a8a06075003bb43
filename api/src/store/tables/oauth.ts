// The OAuth authorization server's state: registered clients, consents, codes and tokens.
// Owns: oauth_clients, oauth_codes, oauth_consents, oauth_tokens, oauth_registration_counts. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// oauth: clients (RFC 7591 registrations and Client ID Metadata Documents)

export interface OAuthClientRow {
  client_id: string;
  kind: 'dynamic' | 'metadata_document';
  client_name: string;
  redirect_uris_json: string;
  created_at: number;
  fetched_at: number;
  last_used_at: number | null;
}

/**
 * Counts one registration in `bucket`'s clock hour unless it already holds `limit`: one conditional
 * upsert, so concurrent registrations cannot pass the limit together (changes 0 when full).
 */
export async function countRegistration(db: Db, bucket: string, window: number, limit: number) {
  return db.run(
    `INSERT INTO oauth_registration_counts (bucket, window_start, n) VALUES (?, ?, 1)
     ON CONFLICT (bucket, window_start) DO UPDATE SET n = oauth_registration_counts.n + 1
     WHERE oauth_registration_counts.n < ?`,
    [bucket, window, limit],
  );
}

/** Drops dynamic clients never used and registered before `createdBefore`. */
export async function deleteUnusedDynamicClients(db: Db, createdBefore: number) {
  return db.run("DELETE FROM oauth_clients WHERE kind = 'dynamic' AND last_used_at IS NULL AND created_at < ?", [
    createdBefore,
  ]);
}

/** Drops the registration counts of clock hours before `windowStart`. */
export async function deleteRegistrationCountsBefore(db: Db, windowStart: number) {
  return db.run('DELETE FROM oauth_registration_counts WHERE window_start < ?', [windowStart]);
}

export async function insertDynamicClient(
  db: Db,
  c: { clientId: string; name: string; redirectUrisJson: string; metadataJson: string; from: string; at: number },
) {
  return db.run(
    `INSERT INTO oauth_clients (client_id, kind, client_name, redirect_uris_json, metadata_json, registered_from, created_at, fetched_at)
       VALUES (?, 'dynamic', ?, ?, ?, ?, ?, ?)`,
    [c.clientId, c.name, c.redirectUrisJson, c.metadataJson, c.from, c.at, c.at],
  );
}

/** Marks a client used (a merchant approved a consent for it), so it never expires unused. */
export async function markClientUsed(db: Db, clientId: string, at: number) {
  return db.run('UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?', [at, clientId]);
}

export async function findClient(db: Db, clientId: string): Promise<OAuthClientRow | undefined> {
  return db.get<OAuthClientRow>('SELECT * FROM oauth_clients WHERE client_id = ?', [clientId]);
}

/** A metadata document fetched again: its name, redirect URIs and document, and when. */
export async function updateClientDocument(
  db: Db,
  clientId: string,
  doc: { name: string; redirectUrisJson: string; metadataJson: string; fetchedAt: number },
) {
  return db.run(
    'UPDATE oauth_clients SET client_name = ?, redirect_uris_json = ?, metadata_json = ?, fetched_at = ? WHERE client_id = ?',
    [doc.name, doc.redirectUrisJson, doc.metadataJson, doc.fetchedAt, clientId],
  );
}

/** A metadata document client seen for the first time (or a concurrent twin's row refreshed). */
export async function upsertDocumentClient(
  db: Db,
  clientId: string,
  doc: { name: string; redirectUrisJson: string; metadataJson: string; fetchedAt: number },
) {
  return db.run(
    `INSERT INTO oauth_clients (client_id, kind, client_name, redirect_uris_json, metadata_json, registered_from, created_at, fetched_at)
         VALUES (?, 'metadata_document', ?, ?, ?, NULL, ?, ?)
         ON CONFLICT (client_id) DO UPDATE SET client_name = excluded.client_name, redirect_uris_json = excluded.redirect_uris_json,
           metadata_json = excluded.metadata_json, fetched_at = excluded.fetched_at`,
    [clientId, doc.name, doc.redirectUrisJson, doc.metadataJson, doc.fetchedAt, doc.fetchedAt],
  );
}

// oauth: consents (the authorization request a merchant is shown, answered once)

export interface OAuthConsentRow {
  session_id: string;
  request_json: string;
  expires_at: number;
  used_at: number | null;
}

/** Drops consents and codes that expired before `before` (their grants and the audit log keep what matters). */
export async function deleteExpiredConsentsAndCodes(db: Db, before: number): Promise<void> {
  await db.run('DELETE FROM oauth_consents WHERE expires_at < ?', [before]);
  await db.run('DELETE FROM oauth_codes WHERE expires_at < ?', [before]);
}

export async function insertConsent(
  db: Db,
  c: { id: string; sessionId: string; clientId: string; requestJson: string; at: number; expiresAt: number },
) {
  return db.run(
    `INSERT INTO oauth_consents (id, session_id, client_id, request_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
    [c.id, c.sessionId, c.clientId, c.requestJson, c.at, c.expiresAt],
  );
}

export async function findConsent(db: Db, id: string): Promise<OAuthConsentRow | undefined> {
  return db.get<OAuthConsentRow>(
    'SELECT session_id, request_json, expires_at, used_at FROM oauth_consents WHERE id = ?',
    [id],
  );
}

/** Answers a consent: one conditional write, changes 1 only for the first answer. */
export async function claimConsent(db: Db, id: string, at: number) {
  return db.run('UPDATE oauth_consents SET used_at = ? WHERE id = ? AND used_at IS NULL', [at, id]);
}

// oauth: authorization codes and tokens

export interface OAuthCodeRow {
  code_hash: string;
  client_id: string;
  grant_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  expires_at: number;
}

export interface OAuthTokenRow {
  token_hash: string;
  kind: 'access' | 'refresh';
  family_id: string;
  grant_id: string;
  client_id: string;
  resource: string;
  token_hint: string;
  created_at: number;
  expires_at: number;
  rotated_at: number | null;
  revoked_at: number | null;
}

export async function insertCode(
  db: Db,
  c: {
    codeHash: string;
    clientId: string;
    grantId: string;
    redirectUri: string;
    codeChallenge: string;
    resource: string;
    at: number;
    expiresAt: number;
  },
) {
  return db.run(
    `INSERT INTO oauth_codes (code_hash, client_id, grant_id, redirect_uri, code_challenge, resource, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [c.codeHash, c.clientId, c.grantId, c.redirectUri, c.codeChallenge, c.resource, c.at, c.expiresAt],
  );
}

export async function findCode(db: Db, codeHash: string): Promise<OAuthCodeRow | undefined> {
  return db.get<OAuthCodeRow>('SELECT * FROM oauth_codes WHERE code_hash = ?', [codeHash]);
}

/** Spends a code: one conditional write, changes 1 only for the first redemption (ADR 1420). */
export async function consumeCode(db: Db, codeHash: string, at: number) {
  return db.run('UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL', [at, codeHash]);
}

export async function insertToken(
  db: Db,
  t: Pick<
    OAuthTokenRow,
    | 'token_hash'
    | 'kind'
    | 'family_id'
    | 'grant_id'
    | 'client_id'
    | 'resource'
    | 'token_hint'
    | 'created_at'
    | 'expires_at'
  >,
) {
  return db.run(
    `INSERT INTO oauth_tokens (token_hash, kind, family_id, grant_id, client_id, resource, token_hint, created_at, expires_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [t.token_hash, t.kind, t.family_id, t.grant_id, t.client_id, t.resource, t.token_hint, t.created_at, t.expires_at],
  );
}

/**
 * On PostgreSQL, redemptions and revocations of one grant's codes and tokens take turns: a
 * transaction-scoped advisory lock named after the grant, taken before any of its rows is written.
 * Without it the losers of a race deadlock: an UPDATE that waited for the winner keeps its lock on
 * the row even when the row no longer matches, and then each loser's family revocation waits for
 * the rows the others hold. SQLite has one writer at a time already. The turn orders the work; the
 * conditional writes are what make each redemption single-use, on both stores.
 */
export async function takeGrantTurn(tx: Db, grantId: string): Promise<void> {
  if (tx.dialect === 'postgres')
    await tx.get('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`flowport:oauth-grant:${grantId}`]);
}

/** Revokes one grant's live tokens issued to a client (one pass). */
export async function revokeClientTokens(db: Db, grantId: string, clientId: string, at: number) {
  return db.run('UPDATE oauth_tokens SET revoked_at = ? WHERE grant_id = ? AND client_id = ? AND revoked_at IS NULL', [
    at,
    grantId,
    clientId,
  ]);
}

/** Revokes one grant's live tokens of a family (one pass). */
export async function revokeFamilyTokens(db: Db, grantId: string, familyId: string, at: number) {
  return db.run('UPDATE oauth_tokens SET revoked_at = ? WHERE grant_id = ? AND family_id = ? AND revoked_at IS NULL', [
    at,
    grantId,
    familyId,
  ]);
}

export async function findTokenOfKind(
  db: Db,
  tokenHash: string,
  kind: 'access' | 'refresh',
): Promise<OAuthTokenRow | undefined> {
  return kind === 'access'
    ? db.get<OAuthTokenRow>("SELECT * FROM oauth_tokens WHERE token_hash = ? AND kind = 'access'", [tokenHash])
    : db.get<OAuthTokenRow>("SELECT * FROM oauth_tokens WHERE token_hash = ? AND kind = 'refresh'", [tokenHash]);
}

export async function findTokenFamily(
  db: Db,
  tokenHash: string,
): Promise<Pick<OAuthTokenRow, 'grant_id' | 'family_id'> | undefined> {
  return db.get<OAuthTokenRow>('SELECT grant_id, family_id FROM oauth_tokens WHERE token_hash = ?', [tokenHash]);
}

/** Rotates a refresh token: one conditional write, changes 1 only for the first use. */
export async function rotateRefreshToken(db: Db, tokenHash: string, at: number) {
  return db.run(
    'UPDATE oauth_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL',
    [at, tokenHash],
  );
}

export async function findTokenRotatedAt(
  db: Db,
  tokenHash: string,
): Promise<{ rotated_at: number | null } | undefined> {
  return db.get<{ rotated_at: number | null }>('SELECT rotated_at FROM oauth_tokens WHERE token_hash = ?', [tokenHash]);
}

// Who owns each table (issue 41, ADR 0012). Every write to a table (INSERT INTO, UPDATE, DELETE
// FROM, upserts included) is in its owner module; SQL of any kind lives only on the store floor
// (api/src/store/, api/src/audit/) and in the read models (api/src/reads/).
// tests/architecture/sql-owners.test.ts checks every file of api/src against this table, and
// docs/architecture.md shows it.

/** Table → the one module of api/src (relative) that writes it: a file, or a folder (ending in `/`) when the family outgrew one file. */
export const TABLE_OWNERS: Record<string, string> = {
  events: 'store/tables/events/',
  event_counts: 'store/tables/events/',
  event_window_counts: 'store/tables/events/',
  dedupe_keys: 'store/tables/events/',
  receipts: 'store/tables/receipts.ts',
  intake_rejection_tallies: 'store/tables/receipts.ts',
  attempts: 'store/tables/attempts.ts',
  shops: 'store/tables/shops.ts',
  shop_buckets: 'store/tables/shops.ts',
  flow_trigger_lifecycle: 'store/tables/shops.ts',
  flow_lifecycle_signals: 'store/tables/shops.ts',
  endpoints: 'store/tables/endpoints.ts',
  endpoint_versions: 'store/tables/endpoints.ts',
  grants: 'store/tables/grants.ts',
  action_intents: 'store/tables/intents.ts',
  idempotency_keys: 'store/tables/intents.ts',
  bulk_replay_items: 'store/tables/intents.ts',
  bulk_replay_runs: 'store/tables/intents.ts',
  replay_claims: 'store/tables/intents.ts',
  diagnostics_shares: 'store/tables/intents.ts',
  alert_subscriptions: 'store/tables/alerts.ts',
  alert_incidents: 'store/tables/alerts.ts',
  alert_notifications: 'store/tables/alerts.ts',
  oauth_clients: 'store/tables/oauth.ts',
  oauth_codes: 'store/tables/oauth.ts',
  oauth_consents: 'store/tables/oauth.ts',
  oauth_tokens: 'store/tables/oauth.ts',
  oauth_registration_counts: 'store/tables/oauth.ts',
  merchant_sessions: 'store/tables/merchant.ts',
  shopify_oauth_states: 'store/tables/merchant.ts',
  shopify_webhook_ids: 'store/tables/merchant.ts',
  shopify_id_token_uses: 'store/tables/merchant.ts',
  usage_counters: 'store/tables/usage.ts',
  rate_windows: 'store/tables/usage.ts',
  store_settings: 'store/tables/settings.ts',
  audit_log: 'audit/log.ts',
  schema_migrations: 'store/migrate.ts',
  sandbox_triggers: 'sandbox/app.ts',
};

/** Where SQL may be written at all (prefixes relative to api/src). */
export const SQL_HOMES: readonly string[] = ['store/', 'audit/', 'reads/'];

/**
 * Files that still hold SQL outside its homes, or write a table they do not own: the work of
 * issue 41 still to do. The list only shrinks: a file listed here that is clean fails the test
 * until it is taken off.
 */
export const NOT_YET_MOVED: readonly string[] = [];

/** Comments out, so prose about SQL is not read as SQL. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

const WRITE = /\b(?:INSERT INTO|UPDATE|DELETE FROM)\s+([a-z_]+)\b/g;
const ANY_SQL =
  /\b(?:SELECT\s[\s\S]{0,400}?\bFROM\s+[a-z_]+|INSERT INTO\s+[a-z_]+|UPDATE\s+[a-z_]+\s+SET\b|DELETE FROM\s+[a-z_]+)/;

/** What is wrong with the SQL in one file of api/src (`file` relative to it), as messages saying where the code belongs. */
export function sqlViolations(file: string, text: string): string[] {
  const body = code(text);
  const out: string[] = [];
  const home = SQL_HOMES.some((h) => file.startsWith(h));
  if (!home && ANY_SQL.test(body))
    out.push(
      `api/src/${file} holds SQL. SQL lives on the store floor: a write in the owner module of its table (tests/architecture/tables.ts), a query either there (a named function such as findEndpoint) or in a read model in api/src/reads/. Call it by name from here.`,
    );
  for (const m of body.matchAll(WRITE)) {
    const table = m[1] as string;
    const owner = TABLE_OWNERS[table];
    if (owner === undefined || owner === file || (owner.endsWith('/') && file.startsWith(owner))) continue;
    out.push(
      `api/src/${file} writes ${table}, which api/src/${owner} owns. Add a named function there (insertX, markY) and call it.`,
    );
  }
  return [...new Set(out)];
}

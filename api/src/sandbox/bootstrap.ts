// Sandbox mode, first start: a sandbox shop, one HMAC endpoint and one grant,
// written to <dataDir>/sandbox-credentials.json (0600). Later starts reuse them.
import { createHmac } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGrant } from '../auth/grants.ts';
import { joinUrl } from '../docs-paths.ts';
import { SANDBOX_MOUNT_PATH, SHOPIFY_APP_PATHS } from '../lib/shopify-app.ts';
import { randomToken } from '../lib/crypto.ts';
import { INGEST_PATH_PREFIX } from '../lib/package-info.ts';
import type { Services } from '../core/types.ts';
import {
  DEFAULT_HMAC,
  type EndpointMapping,
  generateSecret,
  getEndpoint,
  insertEndpoint,
  PLAIN_MAPPING,
} from '../services/endpoints.ts';
import { createShop, getShop } from '../services/shops.ts';
import { lockKeys } from '../store/db.ts';

export const SANDBOX_CREDENTIALS_FILE = 'sandbox-credentials.json';
export const SANDBOX_SHOP_DOMAIN = 'flowport-sandbox.myshopify.com';

export interface SandboxCredentials {
  shop_id: string;
  shop_domain: string;
  endpoint_id: string;
  ingest_url: string;
  signing_secret: string;
  signature_header: string;
  grant_id: string;
  grant_token: string;
  grant_expires_at: string;
  example_body: string;
  curl: string;
}

/**
 * The sandbox endpoint's mapping: the event type from `type` and the sender's event id from
 * `id`, so the banner's sample event (`"id": "demo_1001"`) pasted twice shows dedupe: the second
 * answer is `duplicate_suppressed`, as the docs say.
 */
export const SANDBOX_MAPPING: EndpointMapping = { ...PLAIN_MAPPING, externalId: { kind: 'json', path: 'id' } };

export function signedCurl(ingestUrl: string, secret: string, body: string): string {
  const sig = createHmac('sha256', secret).update(body).digest('hex');
  return `curl -sS -X POST '${ingestUrl}' -H 'Content-Type: application/json' -H '${DEFAULT_HMAC.header}: ${DEFAULT_HMAC.prefix}${sig}' --data '${body}'`;
}

/** The lock key the bootstrap runs under, so processes started at once make one sandbox. */
export const SANDBOX_BOOTSTRAP_LOCK = 'flowport:sandbox-bootstrap';

/**
 * The sandbox shop, endpoint and grant: read from the credentials file when the store still has
 * them, else created and written there. Runs in one transaction under SANDBOX_BOOTSTRAP_LOCK (an
 * advisory lock on PostgreSQL; SQLite's write transaction is exclusive across processes), so of
 * several processes started at once on one store and data dir, the first creates the sandbox and
 * the others wait, then find it and reuse it: one shop, one grant, one credentials file.
 */
export async function ensureSandbox(services: Services): Promise<{ creds: SandboxCredentials; created: boolean }> {
  return services.db.tx(async (tx) => {
    await lockKeys(tx, [SANDBOX_BOOTSTRAP_LOCK]);
    return ensureSandboxLocked({ ...services, db: tx });
  });
}

async function ensureSandboxLocked(services: Services): Promise<{ creds: SandboxCredentials; created: boolean }> {
  const file = join(services.config.dataDir, SANDBOX_CREDENTIALS_FILE);
  if (existsSync(file)) {
    const creds = JSON.parse(readFileSync(file, 'utf8')) as SandboxCredentials;
    if ((await getShop(services, creds.shop_id)) && (await getEndpoint(services, creds.endpoint_id))) {
      // The public URL may have changed (PORT); refresh derived fields.
      const ingest = joinUrl(services.config.publicUrl, `${INGEST_PATH_PREFIX}/${creds.endpoint_id}`);
      if (ingest !== creds.ingest_url) {
        creds.ingest_url = ingest;
        creds.curl = signedCurl(ingest, creds.signing_secret, creds.example_body);
        writeCreds(file, creds);
      }
      return { creds, created: false };
    }
  }
  const shop = await createShop(services, {
    domain: SANDBOX_SHOP_DOMAIN.replace(
      'sandbox',
      `sandbox-${randomToken(3)
        .toLowerCase()
        .replace(/[^a-z0-9]/g, 'x')}`,
    ),
    sandbox: true,
    accessToken: `shpat_sandbox_${randomToken(16)}`,
  });
  const secret = generateSecret();
  const endpoint = await insertEndpoint(
    services,
    shop.id,
    {
      name: 'Sandbox sender',
      senderLabel: 'sandbox',
      triggerVariant: 'external_event',
      authMode: 'hmac_sha256',
      hmac: DEFAULT_HMAC,
      mapping: SANDBOX_MAPPING,
    },
    secret,
    'sandbox-bootstrap',
  );
  const grant = await createGrant(services, {
    shopId: shop.id,
    tier: 'admin_assistant',
    // The banner hands this token to an agent (or the CLI an agent drives): recorded as one.
    actorKind: 'agent',
    actorName: 'sandbox agent',
    expiresInMs: 90 * 86_400_000,
  });
  const ingestUrl = joinUrl(services.config.publicUrl, `${INGEST_PATH_PREFIX}/${endpoint.id}`);
  const exampleBody = JSON.stringify({ type: 'order.paid', id: 'demo_1001', order_id: 1001, total: '42.00' });
  const creds: SandboxCredentials = {
    shop_id: shop.id,
    shop_domain: shop.domain,
    endpoint_id: endpoint.id,
    ingest_url: ingestUrl,
    signing_secret: secret,
    signature_header: DEFAULT_HMAC.header,
    grant_id: grant.id,
    grant_token: grant.token,
    grant_expires_at: grant.expires_at,
    example_body: exampleBody,
    curl: signedCurl(ingestUrl, secret, exampleBody),
  };
  writeCreds(file, creds);
  return { creds, created: true };
}

/** Written whole or not at all (a temp file renamed over it), 0600. */
function writeCreds(file: string, creds: SandboxCredentials): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** The banner's docs line: the URL, and until the site is there, that it is still building. */
export function docsLine(publicUrl: string, docsServed: boolean): string {
  return docsServed
    ? `  Docs:        ${publicUrl}/`
    : `  Docs:        still building; served at ${publicUrl}/ in a minute or two (the API already answers)`;
}

export function sandboxBanner(
  creds: SandboxCredentials,
  publicUrl: string,
  credsFile: string,
  docsServed = true,
): string {
  return [
    '',
    '  Flowport is running in SANDBOX mode (no Shopify credentials configured).',
    '',
    docsLine(publicUrl, docsServed),
    `  Manifest:    ${publicUrl}/agent/v1/manifest`,
    `  Ingest URL:  ${creds.ingest_url}`,
    `  Sandbox shop ${creds.shop_domain} (${creds.shop_id}); received triggers (from this machine only): ${publicUrl}/sandbox/shopify/triggers`,
    '',
    '  Send a signed test event (paste as is; paste it again and the answer is duplicate_suppressed):',
    '',
    `    ${creds.curl}`,
    '',
    `  Grant token (admin_assistant, sandbox only): ${creds.grant_token}`,
    `    curl -sS ${publicUrl}/agent/v1/events -H 'Authorization: Bearer ${creds.grant_token}'`,
    '',
    `  Signing secret and these facts as JSON: ${credsFile} (mode 0600)`,
    '',
    '  Or install the app the way a merchant does (the sandbox plays Shopify: authorize page, token, webhooks):',
    `    ${joinUrl(publicUrl, SHOPIFY_APP_PATHS.install)}?shop=${creds.shop_domain}  (or any <name>.myshopify.com)`,
    `    or open it in the Shopify admin (managed install, the embedded console): ${joinUrl(publicUrl, `${SANDBOX_MOUNT_PATH}/${creds.shop_domain}/admin/apps/flowport`)}`,
    `    then turn a Flow workflow on or off: npx flowport sandbox workflows enable --shop ${creds.shop_domain} --trigger external-event --url ${publicUrl}`,
    '',
  ].join('\n');
}

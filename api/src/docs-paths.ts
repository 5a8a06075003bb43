// Every public docs path the product links to, defined once. Absolute URLs are
// derived with docsUrl(); tests check each of these resolves in the built site.
// Also what makes a built site complete: its stamp.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The build stamp. `npm run build:site` builds in a folder of its own beside the site directory,
 * writes this file there last (the hash of the build's inputs, scripts/docs/lib/site-stamp.ts),
 * then swaps the folder in whole (docs/adr/0011). A site directory with it is a complete build;
 * one without it (an interrupted build of an older Flowport wrote pages in place) is neither
 * served nor ready.
 */
export const SITE_STAMP_FILE = '.build-stamp.json';

/** True when `siteDir` holds a complete build, to serve and to count as ready. */
export function docsServed(siteDir: string): boolean {
  return existsSync(join(siteDir, SITE_STAMP_FILE));
}

/**
 * The origin the docs site is built with. Every absolute URL in the built site (llms.txt, the
 * Markdown twins' Canonical/Markdown lines, canonical tags, the sitemap, robots.txt) starts with
 * it, and the server writes its own public URL's origin in its place as it serves them
 * (withPublicOrigin), so one build serves any origin. `.invalid` never resolves (RFC 2606): a
 * URL that escaped the rewrite fails loudly instead of pointing at someone's host.
 */
export const DOCS_BUILD_ORIGIN = 'https://docs-origin.flowport.invalid';

/** Built-site text with the build origin replaced by the origin of `publicUrl`. */
export function withPublicOrigin(text: string, publicUrl: string): string {
  return text.replaceAll(DOCS_BUILD_ORIGIN, new URL(publicUrl).origin);
}

export const DOCS_PATHS = {
  home: '/',
  llmsTxt: '/llms.txt',
  llmsFullTxt: '/llms-full.txt',
  apiReference: '/reference/api/',
  apiReferenceMd: '/reference/api.md',
  mcpReference: '/reference/mcp/',
  mcpReferenceMd: '/reference/mcp.md',
  oauthReference: '/reference/oauth/',
  changelog: '/reference/changelog/',
  mcpSetup: '/agent-access/mcp-setup/',
  cliReference: '/reference/cli/',
  openapiPage: '/reference/openapi/',
  openapiJson: '/reference/openapi/agent-operations.openapi.json',
  errorsIndex: '/reference/errors/',
  manifestApi: '/agent/v1/manifest',
  refusals: '/agent-access/refusals/',
  grantsAndScopes: '/agent-access/grants-and-scopes/',
  actionIntents: '/agent-access/action-intents/',
  quickstart: '/start/quickstart/',
  authModes: '/set-up/auth-modes/',
  // linked from reads (recovery options, readiness checks, plan usage)
  eventHistory: '/operate/event-history/',
  lifecycle: '/operate/lifecycle/',
  receipts: '/operate/receipts/',
  retention: '/operate/retention/',
  privacyWebhooks: '/operate/privacy-webhooks/',
  usageLimits: '/operate/usage-limits-and-plans/',
  rateLimits: '/agent-access/rate-limits-and-backoff/',
  replay: '/recover/replay/',
  bulkReplay: '/recover/bulk-replay/',
  retriesReplayResend: '/recover/retries-replay-resend/',
  diagnosticsShare: '/recover/diagnostics-share/',
  duplicates: '/recover/duplicates-and-idempotency/',
  supportCodes: '/recover/support-codes/',
  setUpEndpoints: '/set-up/endpoints/',
  flowTrigger: '/set-up/flow-trigger/',
  secretRotation: '/set-up/secret-rotation/',
  deployment: '/operate/deployment/',
  installOnAStore: '/set-up/install-on-a-store/',
  merchantPage: '/set-up/merchant-page/',
} as const;

/** One page per sender auth mode (`standard_webhooks` → `/set-up/auth-modes/standard-webhooks/`). */
export function authModeDocsPath(mode: string): string {
  return `${DOCS_PATHS.authModes}${mode.replace(/_/g, '-')}/`;
}

export function errorDocsPath(code: string): string {
  return `${DOCS_PATHS.errorsIndex}${code}/`;
}

export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path.startsWith('/') ? path : `/${path}`}`;
}

/** The page of one operation: `/reference/api/<operation-id-in-kebab-case>/` (getManifest → get-manifest). */
export function operationPagePath(operationId: string): string {
  const slug = operationId
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
  return `/reference/api/${slug}/`;
}

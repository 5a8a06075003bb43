// Where the docs site's inputs and outputs live, and the public origin used
// for absolute URLs (Canonical/Markdown lines, llms.txt). Defined once.
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');
export const SITE_ROOT = join(REPO_ROOT, 'site');
/** The assembled content collection (gitignored; rebuilt by generate.ts). */
export const DOCS_DIR = join(SITE_ROOT, 'src/content/docs');
export const DIST_DIR = join(SITE_ROOT, 'dist');
export const OPENAPI_FILE = join(REPO_ROOT, 'openapi/agent-operations.openapi.json');

/** Generated static files under site/public (gitignored). */
export const PUBLIC_GENERATED = {
  root: join(SITE_ROOT, 'public/reference'),
  openapi: join(SITE_ROOT, 'public/reference/openapi/agent-operations.openapi.json'),
  scalar: join(SITE_ROOT, 'public/reference/openapi/scalar/standalone.js'),
} as const;

export const DEFAULT_ORIGIN = 'http://localhost:8787';

/** The origin absolute docs URLs use: FLOWPORT_PUBLIC_URL at build time, else the local default. */
export function siteOrigin(env: Record<string, string | undefined> = process.env): string {
  const raw = env.FLOWPORT_PUBLIC_URL?.trim() || DEFAULT_ORIGIN;
  const url = new URL(raw);
  return url.origin;
}

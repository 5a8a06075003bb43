// Where the docs site's inputs and outputs live, and the public origin used
// for absolute URLs (Canonical/Markdown lines, llms.txt). Defined once.
import { join, resolve } from 'node:path';
import { publicUrlFrom } from '../../../api/src/config.ts';

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

/**
 * The origin absolute docs URLs use: the server's public URL for the same environment
 * (FLOWPORT_PUBLIC_URL at build time, else `http://localhost:<PORT>`).
 */
export function siteOrigin(env: Record<string, string | undefined> = process.env): string {
  return new URL(publicUrlFrom(env)).origin;
}

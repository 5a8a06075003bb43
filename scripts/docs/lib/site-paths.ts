// Where the docs site's inputs and outputs live, and the origin absolute URLs
// (Canonical/Markdown lines, llms.txt) are built with. Defined once.
import { join, resolve } from 'node:path';
import { DOCS_BUILD_ORIGIN } from '../../../api/src/docs-paths.ts';

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
 * The origin absolute docs URLs are built with: a placeholder the server replaces with its
 * public URL's origin as it serves the site (api/src/http/static-site.ts), so the built site
 * does not depend on FLOWPORT_PUBLIC_URL or PORT and one build serves every origin.
 */
export function siteOrigin(): string {
  return DOCS_BUILD_ORIGIN;
}

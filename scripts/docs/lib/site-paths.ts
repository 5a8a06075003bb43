// Where the docs site's inputs and outputs live, and the origin absolute URLs
// (Canonical/Markdown lines, llms.txt) are built with. Defined once.
import { basename, dirname, join, resolve } from 'node:path';
import { DEFAULT_PORT } from '../../../api/src/config.ts';
import { DOCS_BUILD_ORIGIN } from '../../../api/src/docs-paths.ts';

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');
export const SITE_ROOT = join(REPO_ROOT, 'site');
/** The assembled content collection (gitignored; rebuilt by generate.ts). */
export const DOCS_DIR = join(SITE_ROOT, 'src/content/docs');
export const DIST_DIR = join(SITE_ROOT, 'dist');

/**
 * The folders a build of the site directory `siteDir` works in, beside it (one file system, so a
 * rename swaps the built site in whole; docs/adr/0011), named after the building process: the
 * folder it builds in, and the previous site while it is swapped out.
 */
export function buildScratch(siteDir: string, pid = process.pid): { building: string; previous: string } {
  const at = (what: string) => join(dirname(siteDir), `.${basename(siteDir)}.${what}-${pid}`);
  return { building: at('building'), previous: at('previous') };
}

/** Whose scratch folder of a build of `siteDir` the name `name` is, or null when it is not one. */
export function scratchOwner(siteDir: string, name: string): { pid: number; previous: boolean } | null {
  const prefix = `.${basename(siteDir)}.`;
  const m = name.startsWith(prefix) ? /^(building|previous)-(\d+)$/.exec(name.slice(prefix.length)) : null;
  return m ? { pid: Number(m[2]), previous: m[1] === 'previous' } : null;
}

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

/**
 * How hand-written pages (content/) write the serving origin in commands and URLs: the local
 * default, which runs as printed for a reader of the repository after `npm start`. The site build
 * writes the build origin in its place (withBuildOrigin), and the server its own origin in place
 * of that, so a command copied from a served page names the server it was read on (issue 43).
 */
export const CONTENT_ORIGIN = `http://localhost:${DEFAULT_PORT}`;

/** A page's text with every CONTENT_ORIGIN replaced by the build origin. */
export function withBuildOrigin(text: string): string {
  return text.replaceAll(CONTENT_ORIGIN, DOCS_BUILD_ORIGIN);
}

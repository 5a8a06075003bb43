// Decides whether site/dist is up to date: a hash of every input the build reads, in the stamp
// (SITE_STAMP_FILE, api/src/docs-paths.ts) the build writes last into the site it built.
// `npm start` and the site tests rebuild only when the hash changed.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { SITE_STAMP_FILE } from '../../../api/src/docs-paths.ts';
import { DIST_DIR, REPO_ROOT, scratchOwner } from './site-paths.ts';

const INPUTS = ['content', 'site', 'scripts/docs', 'openapi', 'api/src', 'package-lock.json'];
const SKIP = new Set(['node_modules', 'dist', '.astro', 'site/src/content/docs', 'site/public/reference']);

function collect(path: string, out: string[]): void {
  const rel = relative(REPO_ROOT, path);
  const name = basename(path);
  // A build's own folders beside site/dist (build-site.ts) are outputs, not inputs.
  if (SKIP.has(rel) || SKIP.has(name) || scratchOwner(DIST_DIR, name)) return;
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const name of readdirSync(path).sort()) collect(join(path, name), out);
  } else if (st.isFile()) {
    out.push(path);
  }
}

/** The inputs' hash. The origin is not one: the server writes its own into absolute links as it serves them. */
export function siteInputsHash(): string {
  const files: string[] = [];
  for (const input of INPUTS) {
    const full = join(REPO_ROOT, input);
    if (existsSync(full)) collect(full, files);
  }
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${relative(REPO_ROOT, file)}\n`);
    hash.update(readFileSync(file));
  }
  return hash.digest('hex');
}

/** Written last into the folder a build made, just before it is swapped in (build-site.ts). */
export function writeStamp(siteDir: string, inputs: string): void {
  writeFileSync(join(siteDir, SITE_STAMP_FILE), `${JSON.stringify({ inputs }, null, 2)}\n`);
}

/** True when `siteDir` (site/dist unless named) is a complete build of exactly the current inputs. */
export function siteIsFresh(siteDir = DIST_DIR): boolean {
  const stamp = join(siteDir, SITE_STAMP_FILE);
  if (!existsSync(stamp)) return false;
  try {
    return (JSON.parse(readFileSync(stamp, 'utf8')) as { inputs?: string }).inputs === siteInputsHash();
  } catch {
    return false;
  }
}

// Decides whether site/dist is up to date: a hash of every input the build
// reads, written next to the output after a successful build. `npm start` and
// the site tests rebuild only when the hash changed.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SITE_STAMP_FILE } from '../../../api/src/http/static-site.ts';
import { DIST_DIR, REPO_ROOT } from './site-paths.ts';

export const STAMP_FILE = join(DIST_DIR, SITE_STAMP_FILE);

const INPUTS = ['content', 'site', 'scripts/docs', 'openapi', 'api/src', 'package-lock.json'];
const SKIP = new Set(['node_modules', 'dist', '.astro', 'site/src/content/docs', 'site/public/reference']);

function collect(path: string, out: string[]): void {
  const rel = relative(REPO_ROOT, path);
  if (SKIP.has(rel) || SKIP.has(path.split('/').pop() as string)) return;
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

/** True when site/dist exists and was built from exactly the current inputs. */
export function siteIsFresh(): boolean {
  if (!existsSync(STAMP_FILE)) return false;
  try {
    const stamp = JSON.parse(readFileSync(STAMP_FILE, 'utf8')) as { inputs?: string };
    return stamp.inputs === siteInputsHash();
  } catch {
    return false;
  }
}

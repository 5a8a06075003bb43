// The URL a `flowport serve` started with, written to <data dir>/served-url.json as it starts, so
// the CLI on the same machine (run from the same directory, or with the same FLOWPORT_DATA_DIR)
// talks to that server without FLOWPORT_BASE_URL, whatever port it took (issue 43). The store
// records the same URL for operator commands (services/served-url.ts); this file is for the CLI as
// an HTTP client, which opens no store.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ENV, publicUrlFrom } from '../config.ts';
import { PRIVATE_FILE_MODE } from './private-files.ts';

export const SERVED_URL_FILE = 'served-url.json';

/** Written whole (a temporary file renamed over it): a reader never sees half of it. */
export function writeServedUrlFile(dataDir: string, url: string, now: number): void {
  const file = join(dataDir, SERVED_URL_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ public_url: url, started_at: new Date(now).toISOString() }, null, 2)}\n`, {
    mode: PRIVATE_FILE_MODE,
  });
  renameSync(tmp, file);
}

/** The recorded URL, or null when there is none (no server started here) or it is not an http(s) URL. */
export function readServedUrlFile(dataDir: string): string | null {
  let url: unknown;
  try {
    url = (JSON.parse(readFileSync(join(dataDir, SERVED_URL_FILE), 'utf8')) as { public_url?: unknown }).public_url;
  } catch {
    return null;
  }
  if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url)) return null;
  return url.replace(/\/+$/, '');
}

/** Where a client on this machine finds Flowport when nothing names it, and where that came from. */
export interface LocalServer {
  url: string;
  source: string;
}

/**
 * The server started from this directory (its data directory: FLOWPORT_DATA_DIR, else ./data, as
 * `flowport serve` resolves it) when one recorded its URL there; else the URL a server started
 * here now would have (FLOWPORT_PUBLIC_URL, else http://localhost:<PORT>, PORT's default when unset).
 */
export function localServerUrl(env: Record<string, string | undefined>, cwd: string): LocalServer {
  const file = join(resolve(cwd, env[ENV.dataDir] ?? 'data'), SERVED_URL_FILE);
  const served = readServedUrlFile(resolve(file, '..'));
  if (served) return { url: served, source: file };
  const named = env[ENV.publicUrl]?.trim() ? ENV.publicUrl : env[ENV.port]?.trim() ? ENV.port : null;
  return { url: publicUrlFrom(env), source: named ?? 'default' };
}

/** How the CLI's default base URL is chosen, in words (help, option descriptions, the CLI reference). */
export const LOCAL_SERVER_RULE = `the URL the last \`npx flowport serve\` started with this data directory recorded (\`${SERVED_URL_FILE}\` in \`${ENV.dataDir}\`, default \`./data\`), else \`${ENV.publicUrl}\`, else \`http://localhost:<${ENV.port}>\``;

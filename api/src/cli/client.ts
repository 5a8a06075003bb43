// The CLI as an HTTP client of a running Flowport: where it is, which grant
// token to send, and one request per agent command. The token comes from the
// environment or a file, never from a flag, and is never printed.
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { CLI_ENV } from '../config.ts';
import { joinUrl } from '../docs-paths.ts';
import { PRODUCT } from '../lib/package-info.ts';
import { localServerUrl } from '../lib/served-url-file.ts';

export class UsageError extends Error {}

/** Flowport could not be reached (connection refused, DNS, timeout). */
export class UnreachableError extends Error {
  readonly url: string;
  constructor(url: string, cause: string) {
    super(
      `Cannot reach Flowport at ${url} (${cause}). Is it running? Point the CLI at it with ${CLI_ENV.baseUrl} or --base-url.`,
    );
    this.url = url;
  }
}

export interface Connection {
  baseUrl: string;
  /** Where the base URL came from (shown by doctor). */
  baseUrlSource: string;
  token: string | null;
  /** `FLOWPORT_TOKEN` or `--token-file <path>`; never the token itself. */
  tokenSource: string | null;
  /** Set when the token file is readable by other users. */
  tokenFileWarning?: string;
}

export function resolveConnection(
  values: Record<string, unknown>,
  env: Record<string, string | undefined>,
  cwd: string = process.cwd(),
): Connection {
  const flagUrl = typeof values['base-url'] === 'string' ? values['base-url'] : undefined;
  const envUrl = env[CLI_ENV.baseUrl]?.trim() || undefined;
  const local = (flagUrl ?? envUrl) ? null : localServerUrl(env, cwd);
  const baseUrl = (flagUrl ?? envUrl ?? (local as { url: string }).url).replace(/\/+$/, '');
  const baseUrlSource = flagUrl ? '--base-url' : envUrl ? CLI_ENV.baseUrl : (local as { source: string }).source;
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new UsageError(
      `The base URL "${baseUrl}" (from ${baseUrlSource}) is not a URL, e.g. https://flowport.example.com.`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`The base URL must start with http:// or https://, got "${baseUrl}" (from ${baseUrlSource}).`);

  const file = typeof values['token-file'] === 'string' ? values['token-file'] : undefined;
  if (file !== undefined) {
    const full = resolve(cwd, file);
    let text: string;
    try {
      text = readFileSync(full, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new UsageError(`--token-file ${file}: cannot read it (${code}).`);
    }
    const token = text.split(/\r?\n/)[0]?.trim() ?? '';
    if (!token) throw new UsageError(`--token-file ${file}: the file is empty.`);
    let tokenFileWarning: string | undefined;
    try {
      if ((statSync(full).mode & 0o077) !== 0)
        tokenFileWarning = `--token-file ${file} can be read by other users; restrict it with \`chmod 600 ${file}\`.`;
    } catch {}
    return { baseUrl, baseUrlSource, token, tokenSource: `--token-file ${file}`, tokenFileWarning };
  }
  const token = env[CLI_ENV.token]?.trim() || null;
  return { baseUrl, baseUrlSource, token, tokenSource: token ? CLI_ENV.token : null };
}

export interface HttpAnswer {
  status: number;
  ok: boolean;
  /** Parsed JSON body, or null when the body is not JSON. */
  json: unknown;
  text: string;
  durationMs: number;
}

export interface RequestSpec {
  method: string;
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send the grant token (false for public reads such as the manifest). */
  auth?: boolean;
}

const TIMEOUT_MS = 30_000;

export async function request(conn: Connection, spec: RequestSpec): Promise<HttpAnswer> {
  const url = `${joinUrl(conn.baseUrl, spec.path)}${spec.query?.size ? `?${spec.query}` : ''}`;
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': `flowport-cli/${PRODUCT.version}`,
    ...spec.headers,
  };
  if (spec.auth !== false && conn.token) headers.authorization = `Bearer ${conn.token}`;
  if (spec.body !== undefined) headers['content-type'] = 'application/json';
  const started = performance.now();
  let res: Response;
  try {
    res = await fetch(url, {
      method: spec.method,
      headers,
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const cause =
      e.name === 'TimeoutError'
        ? `no answer in ${TIMEOUT_MS / 1000} s`
        : (e.cause?.code ?? e.cause?.message ?? e.message);
    throw new UnreachableError(conn.baseUrl, cause);
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, ok: res.ok, json, text, durationMs: Math.round(performance.now() - started) };
}

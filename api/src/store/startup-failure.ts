// Startup failures are one clear line, not a stack trace: an unreachable or missing PostgreSQL,
// a data directory that cannot be written, a port that is taken. Each becomes a catalogued
// AppError naming its target (a database URL with its password redacted) that `npm start` and
// `flowport serve|worker` print as `flowport: <code>: <detail> <docs URL>` before exiting non-zero.
import type { Config } from '../config.ts';
import { AppError, errorDocsUrl } from '../errors/problem.ts';
import { redactUrl } from './postgres.ts';

type Errno = NodeJS.ErrnoException & { address?: string; port?: number };

/** Network failures of a connection attempt (node-postgres passes them on as they come). */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
/** PostgreSQL's answers that mean "no such database / not allowed in" (SQLSTATE). */
const PG_REFUSALS: Record<string, string> = {
  '3D000': 'the database does not exist',
  '28P01': 'the password was refused',
  '28000': 'the user is not allowed to connect',
  '3F000': 'the schema does not exist',
  '57P03': 'the server is starting up or shutting down',
  '53300': 'the server has too many connections',
};
/** File-system failures that mean the data directory cannot be written. */
const FS_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'ENOSPC', 'EDQUOT', 'ELOOP', 'EISDIR']);

/** The first error among `err` and the ones it wraps (AggregateError from a dual-stack connect). */
function causes(err: unknown): Errno[] {
  const out: Errno[] = [];
  const walk = (e: unknown, depth: number) => {
    if (!e || typeof e !== 'object' || depth > 3) return;
    out.push(e as Errno);
    if (e instanceof AggregateError) for (const inner of e.errors) walk(inner, depth + 1);
    if ((e as { cause?: unknown }).cause) walk((e as { cause?: unknown }).cause, depth + 1);
  };
  walk(err, 0);
  return out;
}

/** A failure to connect to PostgreSQL at `url` as store_unreachable, or null when it is something else. */
export function storeUnreachable(err: unknown, url: string): AppError | null {
  for (const e of causes(err)) {
    const code = e.code ?? '';
    const why = CONNECT_CODES.has(code)
      ? `${code}${e.address ? ` from ${e.address}${e.port ? `:${e.port}` : ''}` : ''}`
      : PG_REFUSALS[code]
        ? `${PG_REFUSALS[code]} (SQLSTATE ${code})`
        : null;
    if (why) {
      return new AppError('store_unreachable', {
        detail: `PostgreSQL at ${redactUrl(url)} could not be opened: ${why}.`,
      });
    }
  }
  return null;
}

/** Maps what startServe/startWorker threw to a catalogued startup failure when it is one. */
export function asStartupFailure(
  err: unknown,
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'host' | 'port'>,
): unknown {
  if (err instanceof AppError) return err;
  for (const e of causes(err)) {
    const code = e.code ?? '';
    if (e.syscall === 'listen' && (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')) {
      return new AppError('port_unavailable', {
        detail: `Cannot listen on ${config.host}:${config.port} (${code}${code === 'EADDRINUSE' ? ': another process listens there' : ''}).`,
      });
    }
    const sqliteFs = /^SQLITE_(CANTOPEN|READONLY|IOERR|PERM)/.test(code);
    if ((FS_CODES.has(code) && e.syscall !== 'listen') || (code === 'ENOENT' && e.syscall === 'mkdir') || sqliteFs) {
      return new AppError('data_dir_unwritable', {
        detail: `The data directory ${config.dataDir} cannot be written (${code}${e.path && e.path !== config.dataDir ? ` on ${e.path}` : ''}).`,
      });
    }
  }
  if (config.databaseUrl) return storeUnreachable(err, config.databaseUrl) ?? err;
  return err;
}

/** The one line printed for a failed start. */
export function startupFailureLine(err: unknown, publicUrl: string): string {
  if (err instanceof AppError) return `flowport: ${err.code}: ${err.message} See ${errorDocsUrl(publicUrl, err.code)}`;
  const message = err instanceof Error ? err.message || err.name : String(err);
  return `flowport: startup failed: ${message.split('\n')[0]}`;
}

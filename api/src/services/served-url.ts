// The public URL a server serves, recorded in the store when it starts, so an operator
// command run on the host (without the server's environment) prints the ingest URL senders
// really reach, not a guess from its own PORT.
import { ENV } from '../config.ts';
import { AppError } from '../errors/problem.ts';
import type { Db } from '../store/db.ts';
import { readSetting, writeSetting } from '../store/tables/settings.ts';

const SETTING = 'served_public_url';

/** Records the URL this server serves (every `flowport serve` start; the last one wins). */
export async function recordServedPublicUrl(db: Db, url: string, now: number): Promise<void> {
  await writeSetting(db, SETTING, url, now);
}

export async function servedPublicUrl(db: Db): Promise<string | null> {
  return readSetting(db, SETTING);
}

/**
 * The public URL an operator command prints: FLOWPORT_PUBLIC_URL when set, else the URL the
 * server last started with on this store. Refuses when neither is known, before anything is
 * created (a secret shown once must not sit beside a wrong URL).
 */
export async function operatorPublicUrl(db: Db, env: Record<string, string | undefined>): Promise<string> {
  const explicit = env[ENV.publicUrl]?.trim();
  if (explicit) return explicit.replace(/\/+$/, '');
  const served = await servedPublicUrl(db);
  if (served) return served;
  throw new AppError('invalid_request', {
    detail: `Flowport cannot tell which URL senders reach: no server has started on this store yet and ${ENV.publicUrl} is not set. Start the server once (\`npx flowport serve\`) or set ${ENV.publicUrl} to its public URL, then run the command again.`,
  });
}

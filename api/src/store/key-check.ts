// Every process sharing one store must seal secrets (endpoint signing secrets, shop
// tokens, stored idempotent responses) with the same key. The first process writes a
// value sealed with its key; every later one must be able to open it, or it refuses to
// start rather than write secrets the others cannot read.
import { DOCS_PATHS } from '../docs-paths.ts';
import type { SecretBox } from '../lib/crypto.ts';
import type { Db } from './db.ts';
import { insertSettingIfAbsent, readSetting } from './tables/settings.ts';

const CHECK_NAME = 'secret_key_check';
const CHECK_PLAIN = 'flowport secret key check v1';

export class SecretKeyMismatchError extends Error {
  constructor(databaseKind: string) {
    super(
      `The secret key does not match the one this ${databaseKind} store was written with. Every Flowport process ` +
        'sharing a database needs the same FLOWPORT_SECRET_KEY (or, on one host, the same data directory with its ' +
        `secret.key). Nothing was changed. See ${DOCS_PATHS.deployment}`,
    );
    this.name = 'SecretKeyMismatchError';
  }
}

export async function checkSecretKey(db: Db, secrets: SecretBox, now = Date.now()): Promise<'written' | 'matched'> {
  const inserted = await insertSettingIfAbsent(db, CHECK_NAME, secrets.encrypt(CHECK_PLAIN), now);
  if (inserted === 1) return 'written';
  const value = await readSetting(db, CHECK_NAME);
  let opened: string | null = null;
  try {
    opened = value !== null ? secrets.decrypt(value) : null;
  } catch {
    opened = null;
  }
  if (opened !== CHECK_PLAIN) throw new SecretKeyMismatchError(db.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite');
  return 'matched';
}

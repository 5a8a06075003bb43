// Issue 24 point 5: data at rest is private whatever the umask. The data dir Flowport creates is
// 0700; the SQLite database, its WAL and SHM, the secret key and the sandbox credentials are 0600.
import { chmodSync, existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../api/src/config.ts';
import { createRuntime } from '../../api/src/runtime.ts';
import { ensureSandbox, SANDBOX_CREDENTIALS_FILE } from '../../api/src/sandbox/bootstrap.ts';
import { SqliteDb } from '../../api/src/store/sqlite.ts';
import { tempDir } from '../helpers/runtime.ts';

const mode = (p: string) => statSync(p).mode & 0o777;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('data at rest is private', () => {
  for (const umask of [0o000, 0o022, 0o002]) {
    it(`umask ${umask.toString(8).padStart(3, '0')}: data dir 0700, database, WAL, SHM, key and credentials 0600`, async () => {
      const root = tempDir();
      cleanups.push(() => rmSync(root, { recursive: true, force: true }));
      const dataDir = join(root, 'a', 'data');
      const previous = process.umask(umask);
      let runtime: Awaited<ReturnType<typeof createRuntime>>;
      try {
        runtime = await createRuntime(
          loadConfig({ FLOWPORT_DATA_DIR: dataDir, FLOWPORT_LOG_LEVEL: 'silent', FLOWPORT_WORKER: 'off', PORT: '1' }),
        );
        await ensureSandbox(runtime.services);
        // A write so the WAL and SHM exist while the store is open.
        await runtime.services.db.run(
          "INSERT INTO store_settings (name, value, updated_at) VALUES ('mode-test', 'x', 0)",
        );
        expect(mode(dataDir)).toBe(0o700);
        const db = join(dataDir, 'flowport.db');
        for (const f of [
          db,
          `${db}-wal`,
          `${db}-shm`,
          join(dataDir, 'secret.key'),
          join(dataDir, SANDBOX_CREDENTIALS_FILE),
        ]) {
          expect(existsSync(f), f).toBe(true);
          expect(mode(f), f).toBe(0o600);
        }
      } finally {
        process.umask(previous);
      }
      await runtime.close();
    });
  }

  it('an existing database, WAL and SHM left readable by an older version are made 0600 on open', () => {
    const dir = tempDir();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'flowport.db');
    const first = new SqliteDb(file);
    first.raw.exec('CREATE TABLE t (x INTEGER)');
    first.raw.close();
    writeFileSync(`${file}-wal`, '');
    writeFileSync(`${file}-shm`, '');
    for (const f of [file, `${file}-wal`, `${file}-shm`]) chmodSync(f, 0o644);
    const again = new SqliteDb(file);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) expect(mode(f), f).toBe(0o600);
    again.raw.close();
  });

  it('a data dir the operator made keeps its own mode (it may be a shared mount point)', async () => {
    const dir = tempDir();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    chmodSync(dir, 0o750);
    const db = new SqliteDb(join(dir, 'flowport.db'));
    expect(mode(dir)).toBe(0o750);
    expect(mode(join(dir, 'flowport.db'))).toBe(0o600);
    await db.close();
  });
});

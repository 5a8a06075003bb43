// Store settings: facts the store keeps about itself (served URL, key check, disk probes, data migrations).
// Owns: store_settings. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// settings: the named values the store keeps about itself (secret key check, served URL, write probe).

/** Writes a setting, replacing its value (the last write wins). */
export async function writeSetting(db: Db, name: string, value: string, now: number): Promise<void> {
  await db.run(
    `INSERT INTO store_settings (name, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    [name, value, now],
  );
}

/** Writes a setting only when it has no value yet; returns the rows written (1: this call wrote it). */
export async function insertSettingIfAbsent(db: Db, name: string, value: string, now: number): Promise<number> {
  const r = await db.run(
    'INSERT INTO store_settings (name, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
    [name, value, now],
  );
  return r.changes;
}

/** A setting's value, or null when it was never written. */
export async function readSetting(db: Db, name: string): Promise<string | null> {
  const row = await db.get<{ value: string }>('SELECT value FROM store_settings WHERE name = ?', [name]);
  return row?.value ?? null;
}

/** Forgets every setting (migrate-data, before the source store's settings are copied in). */
export async function clearSettings(db: Db): Promise<void> {
  await db.run('DELETE FROM store_settings');
}

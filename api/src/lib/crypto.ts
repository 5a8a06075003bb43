// Secrets at rest: AES-256-GCM with a key from FLOWPORT_SECRET_KEY, or (sandbox)
// a key generated into the data dir. Hashing and constant-time compare helpers.
import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  hash,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { chmodSync, existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir } from './private-files.ts';

export const SECRET_KEY_FILE = 'secret.key';

export class SecretBox {
  /**
   * Imported once: a raw Buffer given to createCipheriv is imported as a key on every call, which
   * cost about 50 µs of CPU per delivery (a shop token's decryption) on this machine.
   */
  private readonly key: KeyObject;
  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The secret key must be 32 bytes (64 hex characters or base64).');
    this.key = createSecretKey(key);
  }

  /** Parses a key given as 64 hex chars or base64 of 32 bytes. */
  static fromString(value: string): SecretBox {
    const v = value.trim();
    const key = /^[0-9a-f]{64}$/i.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
    return new SecretBox(key);
  }

  /** Reads `<dataDir>/secret.key`, creating it (mode 0600) on first use. */
  static fromDataDir(dataDir: string): SecretBox {
    const file = join(dataDir, SECRET_KEY_FILE);
    if (!existsSync(file)) {
      ensurePrivateDir(dataDir);
      // Processes started at once on one data dir must end with one key: each writes its own
      // candidate whole, then links it in place; link() fails if the file exists, and that
      // process reads the winner's key instead.
      const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      writeFileSync(tmp, randomBytes(32).toString('hex'), { mode: 0o600 });
      chmodSync(tmp, 0o600);
      try {
        linkSync(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        unlinkSync(tmp);
      }
    }
    return SecretBox.fromString(readFileSync(file, 'utf8'));
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return `v1.${iv.toString('base64url')}.${c.getAuthTag().toString('base64url')}.${data.toString('base64url')}`;
  }

  decrypt(sealed: string): string {
    const [v, iv, tag, data] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || data === undefined) throw new Error('Unrecognised sealed secret format');
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(data, 'base64url')), d.final()]).toString('utf8');
  }
}

export function sha256Hex(data: string | Uint8Array): string {
  // One-shot: no Hash object per call (this runs for every intake request).
  return hash('sha256', data, 'hex');
}

/** Constant-time comparison of two strings (length leak only). */
export function safeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const ab = typeof a === 'string' ? Buffer.from(a) : a;
  const bb = typeof b === 'string' ? Buffer.from(b) : b;
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

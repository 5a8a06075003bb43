// The start banner's first minute: it says where the docs are, and that they are still building
// until the site is there to serve (`npm start` builds a missing site beside the running API).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadConfig } from '../../api/src/config.ts';
import { SITE_STAMP_FILE } from '../../api/src/docs-paths.ts';
import { startServe } from '../../api/src/main.ts';
import { freePort } from '../helpers/ports.ts';
import { tempDir } from '../helpers/runtime.ts';
import { freshTestStore } from '../helpers/store.ts';

it('the sandbox banner says the docs are still building, with their URL, until the site is served', async () => {
  const siteDir = join(tempDir(), 'site-dist');
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const store = await freshTestStore('banner');
  const dataDir = tempDir();
  const banner = async () => {
    const lines: string[] = [];
    const config = loadConfig({
      FLOWPORT_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      FLOWPORT_PUBLIC_URL: publicUrl,
      FLOWPORT_SITE_DIR: siteDir,
      FLOWPORT_LOG_LEVEL: 'silent',
      ...store.env,
    });
    const proc = await startServe(config, { worker: false, log: (l) => lines.push(l) });
    await proc.close();
    return lines.join('\n');
  };
  try {
    const building = await banner();
    expect(building).toContain('SANDBOX mode');
    expect(building).toContain(`Docs:        still building; served at ${publicUrl}/`);
    expect(building).toContain('paste it again and the answer is duplicate_suppressed');
    mkdirSync(siteDir, { recursive: true });
    writeFileSync(join(siteDir, 'index.html'), '<!doctype html><title>Docs</title>');
    writeFileSync(join(siteDir, SITE_STAMP_FILE), '{"inputs":"x"}');
    const served = await banner();
    expect(served).toMatch(new RegExp(`^  Docs: {8}${publicUrl.replace(/[.]/g, '\\.')}/$`, 'm'));
    expect(served).not.toContain('still building');
    // Commands run as printed in a checkout (issue 43, item 3): `npx flowport …`, never a bare `flowport …`.
    expect(served).toContain('npx flowport sandbox workflows enable --shop');
    expect(served).not.toMatch(/(?<!npx )\bflowport [a-z]/);
  } finally {
    await store.drop();
  }
});

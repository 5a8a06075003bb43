// The docs site's absolute links (llms.txt, twins' Canonical/Markdown lines, canonical
// tags) name the origin it was built for, so that origin must be the server's public URL
// for the same environment, and a site built for another origin counts as stale (`npm start`
// rebuilds it instead of serving links to another host).
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../api/src/config.ts';
import { siteIsFresh } from '../../scripts/docs/lib/site-stamp.ts';
import { ensureSiteBuilt, readDist, siteOrigin } from './helpers/site.ts';

beforeAll(ensureSiteBuilt, 900_000);

describe('the origin the docs are built for', () => {
  it('is the origin of the public URL the server uses, for the same environment', () => {
    const envs: Record<string, string>[] = [
      {},
      { PORT: '9123' },
      { FLOWPORT_PUBLIC_URL: 'https://flows.example.com/' },
      { PORT: '9123', FLOWPORT_PUBLIC_URL: 'http://127.0.0.1:8801' },
      { PORT: '9123', FLOWPORT_PUBLIC_URL: '' },
    ];
    for (const env of envs) {
      expect(siteOrigin(env), JSON.stringify(env)).toBe(new URL(loadConfig(env).publicUrl).origin);
    }
  });

  it('is what the built llms.txt links to', () => {
    const links = [...readDist('/llms.txt').matchAll(/^- \[[^\]]+\]\(([^)]+)\)/gm)].map((m) => m[1] as string);
    expect(links.length).toBeGreaterThan(20);
    expect(links.filter((l) => !l.startsWith(`${siteOrigin()}/`))).toEqual([]);
  });

  it('is part of freshness: the site built here is stale for another public URL or port', () => {
    expect(siteIsFresh(process.env)).toBe(true);
    expect(siteIsFresh({ ...process.env, FLOWPORT_PUBLIC_URL: 'https://flows.example.com' })).toBe(false);
    const port = Number(new URL(siteOrigin()).port || 80);
    expect(siteIsFresh({ ...process.env, FLOWPORT_PUBLIC_URL: '', PORT: String(port + 1) })).toBe(false);
  });
});

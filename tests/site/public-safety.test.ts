// The public-safety scanner catches planted secrets and private data, lets
// placeholders through, and finds nothing in content/, openapi/ or site/dist.
// Samples are assembled at runtime so this repository never holds a realistic secret.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GRANT_TOKEN_PREFIX, mintGrantToken } from '../../api/src/auth/grant-tokens.ts';
import { DEFAULT_SCAN_PATHS, scanPaths, scanText } from '../../scripts/docs/public-safety-scan.ts';
import { REPO_ROOT } from '../../scripts/docs/lib/site-paths.ts';
import { ensureSiteBuilt } from './helpers/site.ts';

const alnum = (n: number) =>
  Array.from(randomBytes(n), (b) => 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[b % 62]).join('');
const hex = (n: number) =>
  randomBytes(Math.ceil(n / 2))
    .toString('hex')
    .slice(0, n);
const b64 = (n: number) => randomBytes(n).toString('base64');
const j = (...parts: string[]) => parts.join('');

/** One planted sample per rule: [rule id, text]. */
function plantedSamples(): [string, string][] {
  const sig = createHmac('sha256', alnum(24)).update('{"id":1}').digest('hex');
  return [
    ['private-key', j('-----BEGIN ', 'RSA PRIVATE', ' KEY-----\n', b64(48))],
    ['flowport-grant-token', `token: ${mintGrantToken()}`],
    ['shopify-token', j('X: sh', 'pat_', hex(32))],
    ['stripe-key', j('key = sk', '_live_', alnum(24))],
    ['webhook-secret', j('wh', 'sec_', b64(24))],
    ['github-token', j('gh', 'p_', alnum(36))],
    ['slack-token', j('xo', 'xb-', hex(12), '-', alnum(24))],
    [
      'aws-key',
      j(
        'AK',
        'IA',
        alnum(16)
          .toUpperCase()
          .replace(/[^A-Z0-9]/g, 'Q'),
      ),
    ],
    ['jwt', j('ey', 'J', alnum(20), '.ey', 'J', alnum(30), '.', alnum(32))],
    ['auth-header', j('curl -H "Author', 'ization: Bearer ', alnum(40), '"')],
    ['credential-header', j('X-Hub-Signa', 'ture-256: ', 'sha256=', sig)],
    ['signature-value', j('v1', '=', sig)],
    ['database-url', j('post', 'gres://flowport:', alnum(16), '@db.internal.', 'corp:5432/flowport')],
    ['assigned-secret', j('"signing_', 'secret": "', alnum(10), '42', alnum(10), '"')],
    ['email-address', j('customer: jane.doe', '@', 'gmail.com')],
    ['shop-domain', j('shop: cool-sneakers-', hex(4), '.mysho', 'pify.com')],
  ];
}

describe('public-safety scanner', () => {
  it.each(plantedSamples())('catches a planted %s', (rule, text) => {
    const findings = scanText(text, 'planted.md');
    expect(findings.map((f) => f.rule.split(' ')[0])).toContain(rule);
    // The report masks what it found instead of repeating it.
    for (const f of findings)
      expect(
        (text.includes(f.excerpt.replace(/[…*]+$/, '')) && f.excerpt.length < text.length) || f.excerpt.includes('…'),
      ).toBe(true);
  });

  it('finds planted samples in files on disk and reports file and line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fp-scan-'));
    try {
      const samples = plantedSamples();
      writeFileSync(
        join(dir, 'page.md'),
        ['# Safe title', '', ...samples.map(([, t]) => t.replace(/\n/g, ' '))].join('\n'),
      );
      const findings = scanPaths([dir]);
      const rules = new Set(findings.map((f) => f.rule.split(' ')[0]));
      for (const [rule] of samples) expect(rules).toContain(rule);
      expect(findings.every((f) => f.file.endsWith('page.md') && f.line >= 3)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets documented placeholders through', () => {
    const safe = [
      'Authorization: Bearer <GRANT_TOKEN>',
      'curl -H "Authorization: Bearer $FLOWPORT_GRANT_TOKEN"',
      'X-Hub-Signature-256: sha256=<HEX_SIGNATURE>',
      'Stripe-Signature: t=<TIMESTAMP>,v1=<SIGNATURE>',
      'FLOWPORT_DATABASE_URL=postgres://<USER>:<PASSWORD>@<HOST>:5432/flowport',
      'postgres://…',
      '"signing_secret": "<SIGNING_SECRET>"',
      'support@example.com and flowport-sandbox.myshopify.com and example.myshopify.com',
      `Grant tokens start with ${GRANT_TOKEN_PREFIX} followed by random characters.`,
      'whsec_<BASE64_SECRET>',
    ].join('\n');
    expect(scanText(safe, 'safe.md')).toEqual([]);
  });

  it('finds nothing in content/, openapi/ and the built site', async () => {
    await ensureSiteBuilt();
    const findings = scanPaths(DEFAULT_SCAN_PATHS.map((p) => join(REPO_ROOT, p)));
    expect(findings).toEqual([]);
  }, 900_000);
});

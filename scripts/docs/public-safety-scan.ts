// Public-safety scan: fails when the docs sources, the OpenAPI contract or the
// built site contain anything that looks like a real secret, signature, auth
// header, database URL or customer data. Placeholders (`<GRANT_TOKEN>`,
// `<SIGNING_SECRET>`, `$SIG`, `${TOKEN}`) pass. `npm run scan:public`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { GRANT_TOKEN_PREFIX } from '../../api/src/auth/grant-tokens.ts';
import { REPO_ROOT } from './lib/site-paths.ts';

export interface Finding {
  file: string;
  line: number;
  rule: string;
  /** The match with its middle masked, so the report never republishes a secret. */
  excerpt: string;
}

interface Rule {
  id: string;
  what: string;
  pattern: RegExp;
  /** Return false to let a match pass (e.g. a documented placeholder). */
  accept?: (match: RegExpExecArray) => boolean;
  /**
   * Data rules (emails, shop domains) apply to pages and contracts, not to
   * bundled JavaScript/CSS, whose third-party code carries authors' addresses.
   */
  dataRule?: boolean;
}

/** Values that are obviously placeholders or shell references, not secrets. */
function isPlaceholder(value: string): boolean {
  return (
    /^[<$%{]|^\.\.\.|…|^x{6,}$|^X{6,}$|^(your|my|example|redacted|placeholder|changeme)[-_]/i.test(value) ||
    /<[A-Z_]+>/.test(value) ||
    // The same placeholder in built HTML, where `<` and `>` are escaped.
    /&lt;[A-Z_]+&gt;/.test(value)
  );
}

const EXAMPLE_EMAIL_DOMAINS = /(^|\.)(example\.(com|org|net)|example|test|invalid|localhost)$/i;
const EXAMPLE_SHOP = /^(example|your|my|demo|test|sandbox|flowport-sandbox|acme|shop)([-_a-z0-9]*)$/i;

const RULES: Rule[] = [
  { id: 'private-key', what: 'a PEM private key', pattern: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/g },
  {
    id: 'flowport-grant-token',
    what: 'a Flowport grant token',
    pattern: new RegExp(`${GRANT_TOKEN_PREFIX}[0-9A-Za-z]{20,}`, 'g'),
  },
  {
    id: 'shopify-token',
    what: 'a Shopify access token or secret',
    pattern: /\bshp(?:at|ca|pa|ss|tka)_[0-9a-fA-F]{16,}/g,
  },
  { id: 'stripe-key', what: 'a Stripe API key', pattern: /\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}/g },
  { id: 'webhook-secret', what: 'a webhook signing secret (whsec_)', pattern: /\bwhsec_[0-9A-Za-z+/=]{16,}/g },
  {
    id: 'github-token',
    what: 'a GitHub token',
    pattern: /\b(?:gh[pousr]_[0-9A-Za-z]{30,}|github_pat_[0-9A-Za-z_]{30,})/g,
  },
  {
    id: 'slack-token',
    what: 'a Slack token or webhook URL',
    pattern: /\bxox[abprs]-[0-9A-Za-z-]{10,}|hooks\.slack\.com\/services\/T[0-9A-Z]+\/[0-9A-Z]+\/[0-9A-Za-z]+/g,
  },
  { id: 'aws-key', what: 'an AWS access key id', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  {
    id: 'jwt',
    what: 'a JSON Web Token',
    pattern: /\beyJ[0-9A-Za-z_-]{10,}\.eyJ[0-9A-Za-z_-]{10,}\.[0-9A-Za-z_-]{10,}/g,
  },
  {
    id: 'auth-header',
    what: 'an Authorization header with a real credential',
    pattern: /\bAuthorization["']?\s*[:=]\s*["']?(?:Bearer|Basic|token)\s+([^\s"'`,;)]+)/gi,
    accept: (m) => !isPlaceholder(m[1] as string) && (m[1] as string).length >= 12,
  },
  {
    id: 'credential-header',
    what: 'a credential or signature header with a literal value',
    pattern:
      /\b(X-Shopify-Access-Token|X-Shopify-Hmac-Sha256|X-Hub-Signature(?:-256)?|Stripe-Signature|webhook-signature|svix-signature|X-Slack-Signature|Typeform-Signature|X-Api-Key)["']?\s*[:=]\s*["']?([^\s"'`,;]+)/gi,
    accept: (m) => !isPlaceholder(m[2] as string) && /[0-9a-f]{16,}|[0-9A-Za-z+/]{24,}={0,2}/.test(m[2] as string),
  },
  {
    id: 'signature-value',
    what: 'a literal HMAC signature',
    pattern: /\b(?:sha256=|sha1=|v0=|v1=)([0-9a-f]{40,})\b|\bv1,([0-9A-Za-z+/]{40,}={0,2})/g,
  },
  {
    id: 'database-url',
    what: 'a database URL with credentials or a real host',
    pattern: /\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqp):\/\/([^\s"'`<>)]*)/gi,
    accept: (m) => {
      const rest = m[1] as string;
      if (rest === '' || isPlaceholder(rest) || rest.startsWith('…')) return false;
      const auth = /^([^@/]*)@/.exec(rest);
      if (auth && !/^[^:]*:(<|\$|\{|…)/.test(auth[1] as string) && (auth[1] as string).includes(':')) return true;
      const host = (auth ? rest.slice((auth[0] as string).length) : rest).split(/[/:?]/)[0] ?? '';
      return (
        host !== '' &&
        !/^(localhost|127\.0\.0\.1|db|postgres|host|example\.(com|org))$/i.test(host) &&
        !host.endsWith('.example.com')
      );
    },
  },
  {
    id: 'assigned-secret',
    what: 'a secret, token or password assigned a literal value',
    pattern:
      /\b(?:secret|signing_secret|client_secret|api[_-]?key|access[_-]?token|password|passwd)["']?\s*[:=]\s*["']([^"'\s]{12,})["']/gi,
    accept: (m) => !isPlaceholder(m[1] as string) && /\d/.test(m[1] as string) && /[A-Za-z]/.test(m[1] as string),
  },
  {
    id: 'email-address',
    what: 'an email address (customer data?)',
    pattern: /\b[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b/g,
    accept: (m) => !EXAMPLE_EMAIL_DOMAINS.test(m[1] as string),
    dataRule: true,
  },
  {
    id: 'shop-domain',
    what: 'a real-looking shop domain (merchant data?)',
    pattern: /\b([a-z0-9][a-z0-9-]*)\.myshopify\.com\b/gi,
    accept: (m) => !EXAMPLE_SHOP.test(m[1] as string),
    dataRule: true,
  },
];

/** Scans one text. Lines containing no candidate are skipped cheaply. */
export function scanText(text: string, file: string): Finding[] {
  const findings: Finding[] = [];
  const lineStarts: number[] = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const lineOf = (index: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] as number) <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const code = /\.(m?js|css)$/.test(file);
  for (const rule of RULES) {
    if (code && rule.dataRule) continue;
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(text); m !== null; m = rule.pattern.exec(text)) {
      if (rule.accept && !rule.accept(m)) continue;
      findings.push({ file, line: lineOf(m.index), rule: `${rule.id} (${rule.what})`, excerpt: mask(m[0]) });
    }
  }
  return findings;
}

function mask(value: string): string {
  const v = value.length > 80 ? value.slice(0, 80) : value;
  if (v.length <= 10) return `${v.slice(0, 3)}…`;
  return `${v.slice(0, 8)}…${'*'.repeat(Math.min(8, v.length - 8))}`;
}

const TEXT_EXTENSIONS = new Set([
  '.md',
  '.mdx',
  '.txt',
  '.html',
  '.json',
  '.xml',
  '.js',
  '.mjs',
  '.css',
  '.svg',
  '.yaml',
  '.yml',
  '.ts',
]);
/** Third-party bundles copied verbatim into the site; they are not ours to publish secrets in, and their minified code trips generic rules. */
const SKIP_DIRS = new Set(['node_modules', '.git', 'pagefind']);
const SKIP_PATHS = [/\/reference\/openapi\/scalar\//];

function listFiles(path: string, out: string[]): void {
  if (!existsSync(path)) return;
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      if (SKIP_DIRS.has(name)) continue;
      listFiles(join(path, name), out);
    }
  } else if (TEXT_EXTENSIONS.has(extname(path)) && !SKIP_PATHS.some((re) => re.test(path))) {
    out.push(path);
  }
}

export function scanPaths(paths: readonly string[]): Finding[] {
  const files: string[] = [];
  for (const p of paths) listFiles(p, files);
  return files.flatMap((f) => scanText(readFileSync(f, 'utf8'), relative(REPO_ROOT, f)));
}

export function formatFindings(findings: readonly Finding[]): string {
  return findings.map((f) => `  ${f.file}:${f.line}  ${f.rule}  ${f.excerpt}`).join('\n');
}

export const DEFAULT_SCAN_PATHS = ['content', 'openapi', 'site/dist'];

if (import.meta.main) {
  const args = process.argv.slice(2);
  const targets = (args.length > 0 ? args : DEFAULT_SCAN_PATHS).map((p) => join(REPO_ROOT, p));
  const findings = scanPaths(targets);
  if (findings.length > 0) {
    console.error(
      `public-safety scan: ${findings.length} finding(s). Replace real values with placeholders such as <GRANT_TOKEN> or <SIGNING_SECRET>.\n${formatFindings(findings)}`,
    );
    process.exit(1);
  }
  console.log(`public-safety scan: clean (${targets.map((t) => relative(REPO_ROOT, t)).join(', ')})`);
}

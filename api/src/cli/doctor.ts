// `flowport doctor`: checks the path from this CLI to a usable grant, one step
// at a time, and says what to fix. Reachability and edition come from the public
// manifest; the grant, its expiry and scopes from GET /grant; headroom from
// GET /plan-usage (both count as simple reads on the shop's plan).
import { DOCS_PATHS, errorDocsPath, joinUrl } from '../docs-paths.ts';
import { ASK_FOR_A_GRANT } from '../entry-points.ts';
import { PRODUCT } from '../lib/package-info.ts';
import { agentCommandById } from './agent-table.ts';
import { type Connection, request, UnreachableError } from './client.ts';
import { EXIT } from './exit-codes.ts';
import type { CliIO } from './io.ts';
import { withProgress } from './io.ts';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface DoctorCheck {
  check: 'reachable' | 'edition' | 'transport' | 'token' | 'grant' | 'expiry' | 'scopes' | 'plan';
  status: CheckStatus;
  message: string;
  fix?: string;
  docs_url?: string;
}

export interface DoctorReport {
  ok: boolean;
  base_url: string;
  base_url_source: string;
  checks: DoctorCheck[];
}

interface Manifest {
  product: string;
  edition: string;
  version: string;
  build_commit: string;
  api: { version: string };
  docs: { index: string };
  capabilities: {
    operation_id: string;
    scope: string | null;
    scope_any_of?: string[] | null;
    cli_command: string | null;
    kind: string;
  }[];
  scopes: { scope: string }[];
}

interface Grant {
  id: string;
  tier: string;
  scopes: { scope: string }[];
  actor: { kind: string; name: string };
  token_hint: string;
  expires_at: string;
  expires_in_s: number;
}

interface PlanUsage {
  plan: { name: string };
  period: { resets_at: string };
  meters: { meter: string; used: number; limit: number; remaining: number; state: string }[];
  rate_limits: { per_grant_per_minute: number; this_grant_used: number };
}

interface Problem {
  code?: string;
  detail?: string;
  docs_url?: string;
}

const EXPIRY_WARN_S = 3 * 86_400;
const GRANT_FIX = `${ASK_FOR_A_GRANT}, then put the token in FLOWPORT_TOKEN or a file for --token-file.`;

function duration(s: number): string {
  if (s <= 0) return 'now';
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3_600);
  const m = Math.floor((s % 3_600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  return `${Math.max(m, 1)}m`;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\./.test(host);
}

export async function runDoctor(conn: Connection, io: CliIO): Promise<{ report: DoctorReport; exitCode: number }> {
  const checks: DoctorCheck[] = [];
  const add = (c: DoctorCheck) => checks.push(c);
  const skipRest = (names: DoctorCheck['check'][], why: string) => {
    for (const check of names) add({ check, status: 'skip', message: why });
  };
  const finish = () => {
    const firstFail = checks.find((c) => c.status === 'fail');
    const exitCode = !firstFail
      ? EXIT.ok.code
      : firstFail.check === 'reachable'
        ? EXIT.unreachable.code
        : firstFail.check === 'token' || firstFail.check === 'grant'
          ? EXIT.auth.code
          : EXIT.failed.code;
    return {
      report: { ok: !firstFail, base_url: conn.baseUrl, base_url_source: conn.baseUrlSource, checks },
      exitCode,
    };
  };
  let docsBase = conn.baseUrl;
  const docs = (p: string) => joinUrl(docsBase, p);

  const step: DoctorStep = { conn, io, add, skipRest, docs };
  const manifest = await reachability(step);
  if (!manifest) return finish();
  if (manifest.docs?.index) docsBase = manifest.docs.index.replace(/\/llms\.txt$/, '');
  editionAndTransport(step, manifest);
  const grant = await grantChecks(step);
  if (!grant) return finish();
  const have = scopesCheck(step, manifest, grant);
  await planCheck(step, have);
  return finish();
}

/** What each step of the doctor works with: the connection, the terminal, and how to report a check. */
interface DoctorStep {
  conn: Connection;
  io: CliIO;
  add: (c: DoctorCheck) => void;
  skipRest: (names: DoctorCheck['check'][], why: string) => void;
  docs: (path: string) => string;
}

/** reachable: the public manifest answers; null (the rest skipped) when it does not. */
async function reachability({ conn, io, add, skipRest }: DoctorStep): Promise<Manifest | null> {
  // 1. Reachability and edition (public manifest).
  try {
    const res = await withProgress(io, `Reaching ${conn.baseUrl}`, () =>
      request(conn, { method: 'GET', path: agentCommandById('getManifest').op.path, auth: false }),
    );
    const m = res.json as Manifest | null;
    if (!res.ok || !m || typeof m.product !== 'string') {
      add({
        check: 'reachable',
        status: 'fail',
        message: `${conn.baseUrl} answered HTTP ${res.status} at ${DOCS_PATHS.manifestApi}, not a Flowport manifest.`,
        fix: 'Check FLOWPORT_BASE_URL / --base-url: it should be the Flowport origin (the address that serves /agent/v1/manifest).',
      });
      skipRest(['edition', 'transport', 'token', 'grant', 'expiry', 'scopes', 'plan'], 'Needs a reachable Flowport.');
      return null;
    }
    add({ check: 'reachable', status: 'ok', message: `Flowport answered in ${res.durationMs} ms.` });
    return m;
  } catch (err) {
    if (!(err instanceof UnreachableError)) throw err;
    add({
      check: 'reachable',
      status: 'fail',
      message: err.message,
      fix: `Start Flowport (\`npm start\` on the host) or set FLOWPORT_BASE_URL / --base-url to where it runs (now ${conn.baseUrl}, from ${conn.baseUrlSource}).`,
    });
    skipRest(['edition', 'transport', 'token', 'grant', 'expiry', 'scopes', 'plan'], 'Needs a reachable Flowport.');
    return null;
  }
}

/** edition (the server is a Flowport of this CLI's version) and transport (HTTPS off this machine). */
function editionAndTransport({ conn, add, docs }: DoctorStep, manifest: Manifest): void {
  if (manifest.product !== PRODUCT.name) {
    add({
      check: 'edition',
      status: 'fail',
      message: `The server says it is "${manifest.product}", not ${PRODUCT.name}.`,
      fix: 'Point FLOWPORT_BASE_URL / --base-url at a Flowport.',
    });
  } else {
    const same = manifest.version === PRODUCT.version;
    add({
      check: 'edition',
      status: same ? 'ok' : 'warn',
      message: `${manifest.product} ${manifest.version}, ${manifest.edition} edition, API ${manifest.api.version} (build ${manifest.build_commit}).${same ? '' : ` This CLI is ${PRODUCT.version}.`}`,
      ...(same
        ? {}
        : {
            fix: 'Use the CLI from the same Flowport version as the server, or check the CLI reference for differences.',
          }),
      docs_url: docs(DOCS_PATHS.cliReference),
    });
  }

  const url = new URL(conn.baseUrl);
  if (url.protocol === 'http:' && !isLoopback(url.hostname))
    add({
      check: 'transport',
      status: 'warn',
      message: `${conn.baseUrl} is plain HTTP on another machine: the grant token travels unencrypted.`,
      fix: 'Use the https:// address of this Flowport.',
    });
  else
    add({
      check: 'transport',
      status: 'ok',
      message: url.protocol === 'https:' ? 'HTTPS.' : 'Plain HTTP on this machine.',
    });
}

/** token, grant, expiry: the grant behind the token; null (the rest skipped) when there is none. */
async function grantChecks({ conn, io, add, skipRest, docs }: DoctorStep): Promise<Grant | null> {
  // 2. The token and the grant behind it.
  if (!conn.token) {
    add({
      check: 'token',
      status: 'fail',
      message: 'No grant token: FLOWPORT_TOKEN is not set and no --token-file was given.',
      fix: GRANT_FIX,
      docs_url: docs(DOCS_PATHS.grantsAndScopes),
    });
    skipRest(['grant', 'expiry', 'scopes', 'plan'], 'Needs a grant token.');
    return null;
  }
  add({
    check: 'token',
    status: conn.tokenFileWarning ? 'warn' : 'ok',
    message: `From ${conn.tokenSource}.`,
    ...(conn.tokenFileWarning ? { fix: conn.tokenFileWarning } : {}),
  });

  const g = await withProgress(io, 'Checking the grant', () =>
    request(conn, { method: 'GET', path: agentCommandById('getGrant').op.path }),
  );
  if (!g.ok) {
    const p = (g.json ?? {}) as Problem;
    const code = p.code ?? `HTTP ${g.status}`;
    const what: Record<string, string> = {
      grant_expired: 'The grant has expired.',
      grant_revoked: 'The grant was revoked.',
      invalid_token: 'The token is not a valid grant token (mistyped, truncated, or from another Flowport).',
      missing_token: 'The token was not accepted.',
    };
    add({
      check: 'grant',
      status: 'fail',
      message: `${what[code] ?? p.detail ?? 'The grant was not accepted.'} (${code})`,
      fix: g.status === 401 ? GRANT_FIX : (p.detail ?? 'See the docs page.'),
      docs_url: p.docs_url ?? (p.code ? docs(errorDocsPath(p.code)) : docs(DOCS_PATHS.grantsAndScopes)),
    });
    skipRest(['expiry', 'scopes', 'plan'], 'Needs a valid grant.');
    return null;
  }
  const grant = g.json as Grant;
  add({
    check: 'grant',
    status: 'ok',
    message: `${grant.id}: ${grant.tier} tier for ${grant.actor.kind} "${grant.actor.name}" (token ${grant.token_hint}).`,
  });
  add({
    check: 'expiry',
    status: grant.expires_in_s < EXPIRY_WARN_S ? 'warn' : 'ok',
    message: `Expires ${grant.expires_at} (in ${duration(grant.expires_in_s)}).`,
    ...(grant.expires_in_s < EXPIRY_WARN_S
      ? { fix: `${ASK_FOR_A_GRANT} before this one expires (grants cannot be extended).` }
      : {}),
    docs_url: docs(DOCS_PATHS.grantsAndScopes),
  });
  return grant;
}

/** scopes: what the grant allows, in commands; returns the scopes it holds. */
function scopesCheck({ add, docs }: DoctorStep, manifest: Manifest, grant: Grant): Set<string> {
  // 3. What the scopes allow, in commands.
  const have = new Set(grant.scopes.map((s) => s.scope));
  // A capability that also needs one of several scopes (confirm: an execute scope) is allowed
  // only when the grant holds one of them too, as the server decides.
  const needs = (c: Manifest['capabilities'][number]) =>
    c.scope_any_of?.length ? `${c.scope} and one of ${c.scope_any_of.join(', ')}` : c.scope;
  const blocked = manifest.capabilities.filter(
    (c) =>
      c.scope !== null && (!have.has(c.scope) || (c.scope_any_of?.length && !c.scope_any_of.some((s) => have.has(s)))),
  );
  const executes = manifest.scopes.map((s) => s.scope).filter((s) => s.endsWith(':execute'));
  const canConfirm = executes.filter((s) => have.has(s)).map((s) => s.replace(/:execute$/, ''));
  const cannotConfirm = executes.filter((s) => !have.has(s)).map((s) => s.replace(/:execute$/, ''));
  const usable = manifest.capabilities.length - blocked.length;
  const parts = [`${have.size} scopes; ${usable} of ${manifest.capabilities.length} agent commands allowed.`];
  if (blocked.length)
    parts.push(
      `Not allowed: ${blocked.map((c) => `${c.cli_command ?? c.operation_id} (needs ${needs(c)})`).join(', ')}.`,
    );
  parts.push(
    canConfirm.length ? `Can confirm: ${canConfirm.join(', ')}.` : 'Can confirm no action intents (no execute scope).',
  );
  if (cannotConfirm.length && canConfirm.length) parts.push(`Cannot confirm: ${cannotConfirm.join(', ')}.`);
  add({
    check: 'scopes',
    status: 'ok',
    message: parts.join(' '),
    ...(blocked.length || cannotConfirm.length
      ? {
          fix: `If you need more: ${ASK_FOR_A_GRANT.charAt(0).toLowerCase()}${ASK_FOR_A_GRANT.slice(1)} (a larger tier).`,
        }
      : {}),
    docs_url: docs(DOCS_PATHS.grantsAndScopes),
  });
  return have;
}

/** plan: headroom on the shop's meters and this grant's rate limit (needs plan:read). */
async function planCheck({ conn, io, add, docs }: DoctorStep, have: Set<string>): Promise<void> {
  // 4. Plan headroom.
  if (!have.has('plan:read')) {
    add({ check: 'plan', status: 'skip', message: 'The grant has no plan:read scope, so headroom cannot be checked.' });
    return;
  }
  const u = await withProgress(io, 'Checking plan usage', () =>
    request(conn, { method: 'GET', path: agentCommandById('getPlanUsage').op.path }),
  );
  if (!u.ok) {
    const p = (u.json ?? {}) as Problem;
    add({
      check: 'plan',
      status: 'fail',
      message: `Plan usage could not be read: ${p.detail ?? `HTTP ${u.status}`} (${p.code ?? u.status}).`,
      ...(p.docs_url ? { docs_url: p.docs_url } : {}),
    });
    return;
  }
  const usage = u.json as PlanUsage;
  const full = usage.meters.filter((m) => m.state === 'limit_reached');
  const near = usage.meters.filter((m) => m.state === 'near_limit' || m.state === 'in_grace');
  const rate = usage.rate_limits;
  const rateNear = rate.this_grant_used >= 0.8 * rate.per_grant_per_minute;
  const meterText = (ms: PlanUsage['meters']) => ms.map((m) => `${m.meter} ${m.used}/${m.limit}`).join(', ');
  const status: CheckStatus = full.length ? 'fail' : near.length || rateNear ? 'warn' : 'ok';
  const msg = [`${usage.plan.name} plan; meters reset ${usage.period.resets_at}.`];
  if (full.length) msg.push(`At the limit: ${meterText(full)}.`);
  if (near.length) msg.push(`Near the limit: ${meterText(near)}.`);
  if (!full.length && !near.length) {
    const tightest = [...usage.meters].sort((a, b) => a.remaining / (a.limit || 1) - b.remaining / (b.limit || 1))[0];
    if (tightest) msg.push(`Most used: ${tightest.meter} ${tightest.used}/${tightest.limit}.`);
  }
  msg.push(`This minute: ${rate.this_grant_used}/${rate.per_grant_per_minute} requests for this grant.`);
  add({
    check: 'plan',
    status,
    message: msg.join(' '),
    ...(status !== 'ok'
      ? {
          fix: full.length
            ? 'Actions counted by a full meter are refused until the period resets; the merchant can move the shop to a larger plan.'
            : 'Pace your calls; the merchant can move the shop to a larger plan.',
        }
      : {}),
    docs_url: docs(DOCS_PATHS.usageLimits),
  });
}

const MARK: Record<CheckStatus, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL', skip: 'skip' };

export function renderDoctor(r: DoctorReport): string {
  const lines = [`flowport doctor: ${r.base_url} (from ${r.base_url_source})`, ''];
  const width = Math.max(...r.checks.map((c) => c.check.length));
  for (const c of r.checks) {
    lines.push(`  ${MARK[c.status]}  ${c.check.padEnd(width)}  ${c.message}`);
    const pad = ' '.repeat(width + 10);
    if (c.fix && c.status !== 'ok') lines.push(`${pad}fix: ${c.fix}`);
    if (c.docs_url && (c.status === 'fail' || c.status === 'warn')) lines.push(`${pad}docs: ${c.docs_url}`);
  }
  const fails = r.checks.filter((c) => c.status === 'fail').length;
  const warns = r.checks.filter((c) => c.status === 'warn').length;
  lines.push(
    '',
    fails ? `${fails} problem(s) to fix.` : warns ? `Ready, with ${warns} warning(s).` : 'All checks passed.',
  );
  return lines.join('\n');
}

// End to end: the CLI against a real Flowport on a loopback port (real SQLite or
// Postgres store, real worker and sandbox Shopify). The real `flowport` binary runs
// as a child process once per command family (exit codes, a real pseudo-terminal,
// `sandbox` until SIGINT); the other checks run the same CLI in this process (cli()). Reads, a replay preview and confirmation, refusals and the
// other exit codes, doctor on a good and an expired grant, docs, operator
// commands on the same store, and a scan of every output for secrets.
import { createHmac } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { EXIT } from '../../api/src/cli/exit-codes.ts';
import { SANDBOX_MOUNT_PATH } from '../../api/src/sandbox/app.ts';
import { waitFor } from '../handoff/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { deliveredEvent, grant, waitDelivered } from '../intents/helpers.ts';
import { BIN, cli, flowport, NODE, outputsExcept, REPO, type Run, RUNS } from './helpers.ts';

// Each case starts the CLI (about a second of Node start-up) several times.
vi.setConfig({ testTimeout: 120_000 });

let s: TestServer;
let env: Record<string, string>;
let storeEnv: Record<string, string>;
let eventId = '';
let receiptId = '';
let observerToken = '';
let expiredToken = '';
const oneTime = { grantToken: '', endpointSecret: '', rotatedSecret: '' };
/** Imported with `endpoints import-secret`: no output may ever show it. */
const IMPORTED_STRIPE_SECRET = `whsec_imported${'0123456789abcdef'.repeat(2)}`;

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

beforeAll(async () => {
  s = await startTestServer();
  const sb = s.sandbox!;
  env = { FLOWPORT_BASE_URL: s.url, FLOWPORT_TOKEN: sb.grant_token };
  storeEnv = { FLOWPORT_DATA_DIR: s.dataDir, ...(s.databaseUrl ? { FLOWPORT_DATABASE_URL: s.databaseUrl } : {}) };
  eventId = await deliveredEvent(s);
  const row = await s.runtime.services.db.get<{ receipt_id: string }>('SELECT receipt_id FROM events WHERE id = ?', [
    eventId,
  ]);
  receiptId = row?.receipt_id ?? '';
  observerToken = (await grant(s, 'observer', 'cli-observer')).token;
  expiredToken = (
    await createGrant(s.runtime.services, {
      shopId: sb.shop_id,
      tier: 'admin_assistant',
      actorKind: 'agent',
      actorName: 'cli-expired',
      expiresInMs: 1,
    })
  ).token;
}, 60_000);

afterAll(async () => {
  await s?.close();
});

describe('the binary, one process per command family', () => {
  // [family, args, options, exit code, what the output must show]
  const FAMILIES: [string, () => string[], () => Parameters<typeof flowport>[1], () => number, (r: Run) => unknown][] =
    [
      ['agent read', () => ['get-event', eventId], () => ({ env }), () => 0, (r) => r.json.id === eventId],
      [
        'agent refusal',
        () => ['preview-replay', eventId, '--acknowledge-recent-delivery'],
        () => ({ env: { ...env, FLOWPORT_TOKEN: observerToken } }),
        () => EXIT.refusal.code,
        (r) => r.json.code === 'missing_scope',
      ],
      [
        'terminal output (pseudo-terminal)',
        () => ['list-events'],
        () => ({ env, tty: true }),
        () => 0,
        (r) => /^ID\s+STATE\s+EVENT_TYPE/m.test(r.stdout),
      ],
      ['doctor', () => ['doctor'], () => ({ env }), () => 0, (r) => r.json.ok === true],
      [
        'docs',
        () => ['docs'],
        () => ({ env: { FLOWPORT_BASE_URL: s.url } }),
        () => 0,
        (r) => r.json.source === 'manifest',
      ],
      [
        'operator (store)',
        () => ['shops', 'list'],
        () => ({ env: storeEnv }),
        () => 0,
        (r) => r.json.some((x: { id: string }) => x.id === s.sandbox!.shop_id),
      ],
      [
        'bad grant',
        () => ['get-grant'],
        () => ({ env: { ...env, FLOWPORT_TOKEN: expiredToken } }),
        () => EXIT.auth.code,
        (r) => r.json.code === 'grant_expired',
      ],
      [
        'not found',
        () => ['get-event', 'evt_01m0000000000000000000000'],
        () => ({ env }),
        () => EXIT.notFound.code,
        (r) => r.json.code === 'not_found',
      ],
    ];
  it.each(FAMILIES)('%s', async (_family, args, options, code, shows) => {
    const r = await flowport(args(), options());
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(code());
    expect(shows(r), r.stdout).toBe(true);
  });
});

describe('read commands', () => {
  it('print the API answer as JSON when stdout is not a terminal', async () => {
    const manifest = await cli(['get-manifest'], { env: { FLOWPORT_BASE_URL: s.url } });
    expect(manifest.code).toBe(0);
    expect(manifest.json.product).toBe('Flowport');
    expect(
      manifest.json.capabilities.find((c: { operation_id: string }) => c.operation_id === 'previewReplay').cli_command,
    ).toBe('npx flowport preview-replay <event_id>');

    const g = await cli(['get-grant'], { env });
    expect(g.code).toBe(0);
    expect(g.json.id).toBe(s.sandbox!.grant_id);

    const list = await cli(['list-events', '--limit', '5', '--state', 'delivered'], { env });
    expect(list.code).toBe(0);
    expect(list.json.data.map((e: { id: string }) => e.id)).toContain(eventId);

    const show = await cli(['get-event', eventId], { env });
    expect(show.code).toBe(0);
    expect(show.json).toMatchObject({ id: eventId, state: 'delivered' });

    // '.' and '..' (even percent-encoded) would be resolved away by the URL and reach another route.
    for (const dots of ['..', '.', '%2e%2E']) {
      const refused = await cli(['get-event', dots], { env });
      expect([dots, refused.code]).toEqual([dots, EXIT.usage.code]);
      expect(refused.stderr).toContain(`<event_id> "${dots}" is not an id`);
    }

    const receipt = await cli(['get-event-receipt', eventId], { env });
    expect(receipt.code).toBe(0);
    expect(receipt.json.id).toBe(receiptId);
    const receipt2 = await cli(['get-receipt', receiptId], { env });
    expect(receipt2.json.event_id).toBe(eventId);

    const endpoints = await cli(['list-endpoints'], { env });
    expect(endpoints.json.data.map((e: { id: string }) => e.id)).toContain(s.sandbox!.endpoint_id);
    const endpoint = await cli(['get-endpoint', s.sandbox!.endpoint_id], { env });
    expect(endpoint.json.id).toBe(s.sandbox!.endpoint_id);

    for (const words of [
      ['get-setup'],
      ['get-plan-usage'],
      ['get-diagnostics'],
      ['list-audit', '--limit', '3'],
      ['list-action-intents'],
    ]) {
      const r = await cli(words, { env });
      expect(r.code, words.join(' ')).toBe(0);
      expect(r.json, words.join(' ')).toBeTypeOf('object');
    }
  });

  it('print tables and aligned fields on a terminal, and JSON there with --json', async () => {
    const table = await cli(['list-events'], { env, tty: true });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+STATE\s+EVENT_TYPE/m);
    expect(table.stdout).toMatch(new RegExp(`^${eventId}\\s+delivered\\s+order\\.paid`, 'm'));
    const fields = await cli(['get-event', eventId], { env, tty: true });
    expect(fields.stdout).toMatch(/^state\s+delivered$/m);
    const json = await cli(['get-event', eventId, '--json'], { env, tty: true });
    expect(JSON.parse(json.stdout).id).toBe(eventId);
  });

  it('a preview can be read and cancelled', async () => {
    const share = await cli(['preview-diagnostics-share', '--expires-in-hours', '2'], { env });
    expect(share.code).toBe(0);
    expect(share.json).toMatchObject({ kind: 'diagnostics_share', state: 'previewed' });
    const cancelled = await cli(['cancel-action-intent', share.json.id], { env });
    expect(cancelled.code).toBe(0);
    expect(cancelled.json.state).toBe('cancelled');
  });

  it('a nullable id field is a plain value option: diagnostics share --endpoint-id <id>', async () => {
    const endpointId = s.sandbox!.endpoint_id;
    const share = await cli(['preview-diagnostics-share', '--endpoint-id', endpointId], { env });
    expect([share.code, share.stderr]).toEqual([0, '']);
    expect(share.json.parameters).toMatchObject({ endpoint_id: endpointId });
    const help = await cli(['preview-diagnostics-share', '--help']);
    expect(help.stdout).toContain('--endpoint-id <value>');
    await cli(['cancel-action-intent', share.json.id], { env });
  });
});

describe('replay: preview and confirmation', () => {
  it('previews, confirms with a generated idempotency key, and a retry with that key returns the same answer', async () => {
    const preview = await cli(['preview-replay', eventId, '--acknowledge-recent-delivery', '--note', 'cli e2e'], {
      env,
    });
    expect(preview.code).toBe(0);
    expect(preview.json).toMatchObject({ kind: 'replay', state: 'previewed', required_scope: 'replay:execute' });
    expect(preview.json.parameters).toMatchObject({ acknowledge_recent_delivery: true, note: 'cli e2e' });
    const intentId = preview.json.id as string;

    const readable = await cli(['get-action-intent', intentId], { env, tty: true });
    expect(readable.stdout).toContain(`Action intent ${intentId}: replay, previewed`);
    expect(readable.stdout).toContain(`Next: npx flowport confirm-action-intent ${intentId}`);

    const confirm = await cli(['confirm-action-intent', intentId], { env });
    expect(confirm.code).toBe(0);
    const key = /idempotency-key: (\S+) \(generated\)/.exec(confirm.stderr)?.[1];
    expect(key).toBeDefined();
    expect(confirm.stderr).toContain(`--idempotency-key ${key}`);
    expect(confirm.json.state).toBe('executed');
    const replayed = confirm.json.result.event_id as string;
    expect(confirm.json.result.replay_of).toBe(eventId);

    const retry = await cli(['confirm-action-intent', intentId, '--idempotency-key', key as string], { env });
    expect(retry.code).toBe(0);
    expect(retry.stdout).toBe(confirm.stdout);
    expect(retry.stderr).not.toContain('(generated)');

    await waitDelivered(s, replayed);
    const after = await cli(['get-event', replayed], { env });
    expect(after.json).toMatchObject({ id: replayed, state: 'delivered', replay_of: eventId });
  });
});

describe('refusals and other failures', () => {
  it('a refusal exits 4 and carries the reason, the docs URL and the next steps', async () => {
    const obs = { ...env, FLOWPORT_TOKEN: observerToken };
    const piped = await cli(['preview-replay', eventId, '--acknowledge-recent-delivery'], { env: obs });
    expect(piped.code).toBe(EXIT.refusal.code);
    expect(piped.json.code).toBe('missing_scope');
    expect(piped.json.docs_url).toBe(`${s.url}/reference/errors/missing_scope/`);
    expect(piped.json.refusal.layer).toBe('authority');
    expect(piped.json.refusal.reason).toContain('replay:preview');
    // The steps that fix missing_scope come first (issue 43): read the grant, then the merchant page.
    expect(piped.json.refusal.next_steps.map((x: { kind: string }) => x.kind)).toEqual([
      'call',
      'merchant_page',
      'docs',
      'manifest',
      'openapi',
      'ask_human',
    ]);
    expect(piped.json.refusal.next_steps[2].url).toBe(piped.json.docs_url);

    const tty = await cli(['preview-replay', eventId, '--acknowledge-recent-delivery'], { env: obs, tty: true });
    expect(tty.code).toBe(EXIT.refusal.code);
    expect(tty.stdout).toContain('Refused (authority):');
    expect(tty.stdout).toContain(`docs         ${s.url}/reference/errors/missing_scope/`);
    expect(tty.stdout).toContain('needs scope  replay:preview');
    expect(tty.stdout).toMatch(
      /To fix it:\n {2}1\. Read your grant: its tier and scopes\.\n {5}\$ npx flowport get-grant\n/,
    );
    expect(tty.stdout).toMatch(/Then:\n {2}\d\. Read the docs page/);
    expect(tty.stdout).toContain('ask the merchant');

    const boundary = await cli(['preview-replay', eventId, '--payload-override', '{"changed":true}'], { env });
    expect(boundary.code).toBe(EXIT.refusal.code);
    expect(boundary.json.code).toBe('outside_product_boundary');
  });

  it('not found, bad grants, no grant and an unreachable server have their own exit codes', async () => {
    const missing = await cli(['get-event', 'evt_01m0000000000000000000000'], { env });
    expect(missing.code).toBe(EXIT.notFound.code);
    expect(missing.json.code).toBe('not_found');
    expect(missing.json.code).toBe('not_found');

    const invalid = await cli(['list-events'], { env: { ...env, FLOWPORT_TOKEN: 'fpg_notarealtoken' } });
    expect(invalid.code).toBe(EXIT.auth.code);
    expect(invalid.json.code).toBe('invalid_token');

    const expired = await cli(['get-grant'], { env: { ...env, FLOWPORT_TOKEN: expiredToken } });
    expect(expired.code).toBe(EXIT.auth.code);
    expect(expired.json.code).toBe('grant_expired');

    const none = await cli(['list-events'], { env: { FLOWPORT_BASE_URL: s.url }, tty: true });
    expect(none.code).toBe(EXIT.auth.code);
    expect(none.stdout).toContain('missing_token');
    expect(none.stdout).toContain('set FLOWPORT_TOKEN or pass --token-file');

    const port = await closedPort();
    const down = await cli(['get-grant'], { env: { ...env, FLOWPORT_BASE_URL: `http://127.0.0.1:${port}` } });
    expect(down.code).toBe(EXIT.unreachable.code);
    expect(down.stderr).toContain(`Cannot reach Flowport at http://127.0.0.1:${port}`);
  });

  it('--base-url wins over FLOWPORT_BASE_URL', async () => {
    const port = await closedPort();
    const r = await cli(['--base-url', s.url, 'get-grant'], {
      env: { ...env, FLOWPORT_BASE_URL: `http://127.0.0.1:${port}` },
    });
    expect(r.code).toBe(0);
    expect(r.json.id).toBe(s.sandbox!.grant_id);
  });
});

describe('token file', () => {
  it('reads the token from --token-file, warns when others can read it, and names an unreadable file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowport-token-'));
    const file = join(dir, 'token');
    writeFileSync(file, `${s.sandbox!.grant_token}\n`);
    chmodSync(file, 0o600);
    const noEnv = { FLOWPORT_BASE_URL: s.url };
    const ok = await cli(['get-grant', '--token-file', file], { env: noEnv });
    expect(ok.code).toBe(0);
    expect(ok.json.id).toBe(s.sandbox!.grant_id);
    expect(ok.stderr).toBe('');
    chmodSync(file, 0o644);
    const loose = await cli(['get-grant', '--token-file', file], { env: noEnv });
    expect(loose.code).toBe(0);
    expect(loose.stderr).toContain('chmod 600');
    const gone = await cli(['get-grant', '--token-file', join(dir, 'nope')], { env: noEnv });
    expect(gone.code).toBe(EXIT.usage.code);
    expect(gone.stderr).toContain('ENOENT');
  });
});

describe('doctor', () => {
  it('passes every check on a good grant', async () => {
    const r = await cli(['doctor'], { env });
    expect(r.code).toBe(0);
    expect(r.json.ok).toBe(true);
    expect(r.json.checks.map((c: { check: string }) => c.check)).toEqual([
      'reachable',
      'edition',
      'transport',
      'token',
      'grant',
      'expiry',
      'scopes',
      'plan',
    ]);
    for (const c of r.json.checks) expect(c.status, `${c.check}: ${c.message}`).toBe('ok');
    const text = await cli(['doctor'], { env, tty: true });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('All checks passed.');
    expect(text.stdout).toMatch(/ok {4}edition\s+Flowport 0\.\d+\.\d+, Shopify Flow edition/);
  });

  it('tells an observer it may not confirm or cancel an intent, as the server decides (issue 23)', async () => {
    const r = await cli(['doctor'], { env: { ...env, FLOWPORT_TOKEN: observerToken } });
    expect(r.code).toBe(0);
    const scopes = r.json.checks.find((c: { check: string }) => c.check === 'scopes');
    expect(scopes.message).toContain(
      'flowport confirm-action-intent <intent_id> (needs intents:read and one of replay:execute',
    );
    expect(scopes.message).toContain(
      'flowport cancel-action-intent <intent_id> (needs intents:read and one of replay:preview',
    );
    expect(scopes.message).toContain('Can confirm no action intents');
    // The command's help states the same requirement.
    const help = await cli(['confirm-action-intent', '--help'], { env });
    expect(help.stdout).toContain("Scope: `intents:read` and the intent kind's execute scope");
  });

  it('names an expired grant, says what to fix and exits 3', async () => {
    const r = await cli(['doctor'], { env: { ...env, FLOWPORT_TOKEN: expiredToken } });
    expect(r.code).toBe(EXIT.auth.code);
    expect(r.json.ok).toBe(false);
    const byName = Object.fromEntries(r.json.checks.map((c: { check: string }) => [c.check, c]));
    expect(byName.reachable.status).toBe('ok');
    expect(byName.grant.status).toBe('fail');
    expect(byName.grant.message).toContain('expired');
    expect(byName.grant.message).toContain('grant_expired');
    // A merchant is sent to the merchant page, never to a command line on the host (issue 43).
    expect(byName.grant.fix).toContain('merchant page (`/merchant`');
    expect(byName.grant.fix).not.toContain('grants create');
    expect(byName.grant.docs_url).toBe(`${s.url}/reference/errors/grant_expired/`);
    for (const later of ['expiry', 'scopes', 'plan']) expect(byName[later].status).toBe('skip');
    const text = await cli(['doctor'], { env: { ...env, FLOWPORT_TOKEN: expiredToken }, tty: true });
    expect(text.code).toBe(EXIT.auth.code);
    expect(text.stdout).toMatch(/FAIL {2}grant\s+The grant has expired\./);
    expect(text.stdout).toContain('fix: Ask the merchant');
  });

  it('names a missing token and an unreachable server', async () => {
    const noToken = await cli(['doctor'], { env: { FLOWPORT_BASE_URL: s.url } });
    expect(noToken.code).toBe(EXIT.auth.code);
    expect(noToken.json.checks.find((c: { check: string }) => c.check === 'token').status).toBe('fail');
    const port = await closedPort();
    const down = await cli(['doctor', '--base-url', `http://127.0.0.1:${port}`], { env });
    expect(down.code).toBe(EXIT.unreachable.code);
    expect(down.json.checks[0]).toMatchObject({ check: 'reachable', status: 'fail' });
  });
});

describe('docs', () => {
  it('prints the docs pointers without a grant', async () => {
    const r = await cli(['docs'], { env: { FLOWPORT_BASE_URL: s.url } });
    expect(r.code).toBe(0);
    expect(r.json.source).toBe('manifest');
    const urls = Object.fromEntries(r.json.pointers.map((p: { name: string; url: string }) => [p.name, p.url]));
    expect(urls['llms.txt']).toBe(`${s.url}/llms.txt`);
    expect(urls.Manifest).toBe(`${s.url}/agent/v1/manifest`);
    expect(urls.OpenAPI).toBe(`${s.url}/reference/openapi/agent-operations.openapi.json`);
    expect(urls['CLI reference']).toBe(`${s.url}/reference/cli/`);
    expect(urls['CLI reference (Markdown)']).toBe(`${s.url}/reference/cli.md`);
    expect(urls['MCP endpoint']).toBe(`${s.url}/agent/v1/mcp`);
    expect(urls['Markdown twins']).toMatch(/\.md$/);
  });
});

describe('operator commands on the server’s store', () => {
  /** `endpoints create` of an HMAC endpoint on the server's store. */
  const hmacEndpoint = (shop: string, name: string, env: Record<string, string> = storeEnv) =>
    cli(
      [
        'endpoints',
        'create',
        '--shop',
        shop,
        '--name',
        name,
        '--auth-mode',
        'hmac_sha256',
        '--trigger-variant',
        'external_event',
      ],
      { env },
    );

  it('endpoints create prints the ingest URL the server really serves (no PORT in the CLI environment)', async () => {
    // storeEnv names the data dir (and database) only: no PORT, no FLOWPORT_PUBLIC_URL.
    expect(Object.keys(storeEnv).sort()).not.toContain('PORT');
    const created = await hmacEndpoint(s.sandbox!.shop_id, 'served url');
    expect(created.code, created.stderr).toBe(0);
    expect(created.json.ingest_url).toBe(`${s.url}/in/${created.json.id}`);
    // A sender reaches it as printed.
    const body = JSON.stringify({ type: 'order.paid', id: 'served-url-1' });
    const sig = createHmac('sha256', created.json.secret).update(body).digest('hex');
    const sent = await fetch(created.json.ingest_url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-flowport-signature': `sha256=${sig}` },
    });
    expect(sent.status).toBe(202);
  });

  it('endpoints create refuses, creating nothing, on a store no server has served, unless FLOWPORT_PUBLIC_URL says', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowport-unserved-'));
    const env = { FLOWPORT_DATA_DIR: dir };
    const shop = await cli(['shops', 'create', '--domain', 'unserved.myshopify.com', '--sandbox'], { env });
    expect(shop.code, shop.stderr).toBe(0);
    const refused = await hmacEndpoint(shop.json.id, 'no url', env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('FLOWPORT_PUBLIC_URL');
    expect(refused.stderr).toContain('cannot tell which URL senders reach');
    expect(`${refused.stdout}${refused.stderr}`).not.toContain('/in/ep_');
    const told = await hmacEndpoint(shop.json.id, 'told', {
      ...env,
      FLOWPORT_PUBLIC_URL: 'https://flowport.example.com/',
    });
    expect(told.code, told.stderr).toBe(0);
    expect(told.json.ingest_url).toBe(`https://flowport.example.com/in/${told.json.id}`);
    expect(told.json.id).toMatch(/^ep_/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('create a grant whose token is printed once and works, list grants without tokens, revoke it', async () => {
    const shops = await cli(['shops', 'list'], { env: storeEnv });
    expect(shops.code).toBe(0);
    expect(shops.json.map((x: { id: string }) => x.id)).toContain(s.sandbox!.shop_id);

    const created = await cli(
      [
        'grants',
        'create',
        '--shop',
        s.sandbox!.shop_id,
        '--tier',
        'observer',
        '--actor-kind',
        'agent',
        '--actor-name',
        'cli-operator-test',
        '--expires-in',
        '1h',
      ],
      { env: storeEnv },
    );
    expect(created.code).toBe(0);
    oneTime.grantToken = created.json.token;
    expect(oneTime.grantToken).toMatch(/^fpg_/);
    const grantId = created.json.id as string;

    const listed = await cli(['grants', 'list', '--shop', s.sandbox!.shop_id], { env: storeEnv });
    expect(listed.json.map((x: { id: string }) => x.id)).toContain(grantId);

    const use = await cli(['get-grant'], {
      env: { FLOWPORT_BASE_URL: s.url, FLOWPORT_TOKEN: oneTime.grantToken },
    });
    expect(use.code).toBe(0);
    expect(use.json.id).toBe(grantId);

    const revoked = await cli(['grants', 'revoke', '--grant', grantId], { env: storeEnv });
    expect(revoked.code).toBe(0);
    const after = await cli(['get-grant'], {
      env: { FLOWPORT_BASE_URL: s.url, FLOWPORT_TOKEN: oneTime.grantToken },
    });
    expect(after.code).toBe(EXIT.auth.code);
    expect(after.json.code).toBe('grant_revoked');

    const bad = await cli(
      ['grants', 'create', '--shop', 'shop_nope', '--tier', 'observer', '--actor-kind', 'agent', '--actor-name', 'x'],
      {
        env: storeEnv,
      },
    );
    expect(bad.code).toBe(EXIT.notFound.code);
  });

  it('create an endpoint (secret printed once), and the audit chain verifies', async () => {
    const ep = await hmacEndpoint(s.sandbox!.shop_id, 'cli sender');
    expect(ep.code).toBe(0);
    oneTime.endpointSecret = ep.json.secret;
    expect(oneTime.endpointSecret.length).toBeGreaterThan(16);
    const shown = await cli(['get-endpoint', ep.json.id], { env });
    expect(shown.code).toBe(0);
    expect(shown.json.name).toBe('cli sender');

    const audit = await cli(['audit', 'verify'], { env: storeEnv });
    expect(audit.code).toBe(0);
    expect(audit.json.ok).toBe(true);
  });

  it('a Stripe endpoint gets the secret Stripe shows, imported after creation; the placeholder stops verifying', async () => {
    const stripe = new Stripe('sk_test_placeholder');
    const created = await cli(
      [
        'endpoints',
        'create',
        '--shop',
        s.sandbox!.shop_id,
        '--name',
        'stripe prod',
        '--auth-mode',
        'stripe',
        '--trigger-variant',
        'external_event',
      ],
      { env: storeEnv },
    );
    expect(created.code).toBe(0);
    const id: string = created.json.id;
    const placeholder: string = created.json.secret;
    // The notice says the generated secret is a placeholder and gives the exact import command.
    expect(created.json.secret_notice).toContain(
      `endpoints import-secret --endpoint ${id} --secret-env STRIPE_WEBHOOK_SECRET`,
    );
    const send = (secret: string) => {
      const payload = JSON.stringify({ id: `evt_${Math.random().toString(36).slice(2)}`, type: 'charge.succeeded' });
      return fetch(created.json.ingest_url.replace(/^https?:\/\/[^/]+/, s.url), {
        method: 'POST',
        body: payload,
        headers: {
          'content-type': 'application/json',
          'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret }),
        },
      });
    };
    expect((await send(placeholder)).status).toBe(202);

    const imported = await cli(
      ['endpoints', 'import-secret', '--endpoint', id, '--secret-env', 'STRIPE_WEBHOOK_SECRET'],
      {
        env: { ...storeEnv, STRIPE_WEBHOOK_SECRET: IMPORTED_STRIPE_SECRET },
      },
    );
    expect(imported.code).toBe(0);
    expect(imported.json).toMatchObject({
      endpoint_id: id,
      auth_mode: 'stripe',
      secret_last4: IMPORTED_STRIPE_SECRET.slice(-4),
      config_version: 2,
      previous_secret_valid_until: null,
    });
    // The server's endpoint cache holds config for at most takes_effect_within_s.
    const deadline = Date.now() + 10_000;
    let status = (await send(IMPORTED_STRIPE_SECRET)).status;
    while (status !== 202 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await send(IMPORTED_STRIPE_SECRET)).status;
    }
    expect(status).toBe(202);
    const old = await send(placeholder);
    expect([old.status, ((await old.json()) as { code: string }).code]).toEqual([401, 'signature_mismatch']);

    const entry = await s.runtime.services.db.get<{ actor_kind: string; details_json: string }>(
      "SELECT actor_kind, details_json FROM audit_log WHERE action = 'endpoint.secret_import' AND target_id = ?",
      [id],
    );
    expect(entry?.actor_kind).toBe('operator');
    expect(JSON.parse(entry?.details_json ?? '{}')).toMatchObject({
      secret_last4: IMPORTED_STRIPE_SECRET.slice(-4),
      overlap_hours: 0,
    });
    expect(entry?.details_json).not.toContain(IMPORTED_STRIPE_SECRET);

    // Refusals: a secret Stripe could not have made, an unset variable, an unknown endpoint.
    const wrong = await cli(['endpoints', 'import-secret', '--endpoint', id, '--secret-env', 'S'], {
      env: { ...storeEnv, S: 'not_a_stripe_secret' },
    });
    // Off a terminal the failure is the API's problem object on stdout, plus one line on stderr.
    expect(wrong.code).toBe(EXIT.usage.code);
    expect(wrong.json).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(wrong.json.detail).toMatch(/A Stripe signing secret starts with `whsec_`/);
    expect(wrong.json.docs_url).toMatch(/\/reference\/errors\/invalid_request\/$/);
    expect(wrong.stderr).toMatch(/invalid_request: A Stripe signing secret starts with `whsec_`/);
    const unset = await cli(['endpoints', 'import-secret', '--endpoint', id, '--secret-env', 'UNSET_VAR'], {
      env: storeEnv,
    });
    expect(unset.code).not.toBe(0);
    expect(unset.stderr).toMatch(/--secret-env UNSET_VAR: the environment variable is empty or unset/);
    const missing = await cli(['endpoints', 'import-secret', '--endpoint', 'ep_nope', '--secret-env', 'S'], {
      env: { ...storeEnv, S: IMPORTED_STRIPE_SECRET },
    });
    expect(missing.code).toBe(EXIT.notFound.code);
    expect(missing.json.code).toBe('not_found');
  });

  it('endpoints create prints the headers the endpoint reads as configured, and a sender using them is accepted', async () => {
    const run = (mode: string, extra: string[]) =>
      cli(
        [
          'endpoints',
          'create',
          '--shop',
          s.sandbox!.shop_id,
          '--name',
          `custom ${mode}`,
          '--auth-mode',
          mode,
          '--trigger-variant',
          'external_event',
          ...extra,
        ],
        { env: storeEnv },
      );
    const post = (url: string, body: string, headers: Record<string, string>) =>
      fetch(url.replace(/^https?:\/\/[^/]+/, s.url), {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
      });

    const hmac = await run('hmac_sha256', ['--signature-header', 'X-Acme-Sig', '--timestamp-header', 'X-Acme-Ts']);
    expect(hmac.code).toBe(0);
    expect(hmac.json.headers).toEqual(['x-acme-sig', 'x-acme-ts']);
    const [sigHeader, tsHeader] = hmac.json.headers as [string, string];
    const body = JSON.stringify({ type: 'order.paid', id: 'custom-1' });
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = createHmac('sha256', hmac.json.secret).update(`${ts}.${body}`).digest('hex');
    const signed = await post(hmac.json.ingest_url, body, { [sigHeader]: `sha256=${sig}`, [tsHeader]: ts });
    expect(signed.status).toBe(202);

    const fixed = await run('static_header', ['--static-header', 'X-Acme-Token']);
    expect(fixed.code).toBe(0);
    expect(fixed.json.headers).toEqual(['x-acme-token']);
    const sent = await post(fixed.json.ingest_url, body, { [fixed.json.headers[0]]: fixed.json.secret });
    expect(sent.status).toBe(202);
  });
  it('shops reconnect --domain: a shop Shopify answers 404 for (wrong domain) gets its domain corrected, its held events are released and delivered, and the change is audited', async () => {
    const created = await cli(
      ['shops', 'create', '--domain', 'cli-typo-shop.myshopify.com', '--access-token-env', 'SHOP_TOKEN'],
      { env: { ...storeEnv, SHOP_TOKEN: 'shpat_test_placeholder' } },
    );
    expect(created.code).toBe(0);
    const shopId: string = created.json.id;
    // The sandbox plays Shopify: no store at the mistyped domain.
    const fault = await fetch(`${s.url}${SANDBOX_MOUNT_PATH}/_faults/cli-typo-shop.myshopify.com`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'not_found' }),
    });
    expect(fault.status).toBe(200);
    const ep = await hmacEndpoint(shopId, 'erp');
    expect(ep.code).toBe(0);
    const body = JSON.stringify({ type: 'order.paid', id: 'typo-1' });
    const sig = createHmac('sha256', ep.json.secret).update(body).digest('hex');
    const sent = await fetch(ep.json.ingest_url.replace(/^https?:\/\/[^/]+/, s.url), {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-flowport-signature': `sha256=${sig}` },
    });
    expect(sent.status).toBe(202);
    const { event_id: eventId } = (await sent.json()) as { event_id: string };
    const db = s.runtime.services.db;
    const stateOf = async () =>
      (await db.get<{ state: string; support_code: string | null }>(
        'SELECT state, support_code FROM events WHERE id = ?',
        [eventId],
      ))!;
    await waitFor(async () => (await stateOf()).state === 'held', 'the event held (404)');
    expect(await stateOf()).toEqual({ state: 'held', support_code: 'FP-H-GONE' });

    // A malformed domain, and another shop's domain, are refused; nothing changes.
    const bad = await cli(['shops', 'reconnect', '--shop', shopId, '--domain', 'not a domain'], { env: storeEnv });
    expect(bad.code).toBe(EXIT.usage.code);
    expect(bad.json.code).toBe('invalid_request');
    const sandboxDomain = (await db.get<{ domain: string }>('SELECT domain FROM shops WHERE id = ?', [
      s.sandbox!.shop_id,
    ]))!.domain;
    const taken = await cli(['shops', 'reconnect', '--shop', shopId, '--domain', sandboxDomain], {
      env: storeEnv,
    });
    expect(taken.json.code).toBe('invalid_request');
    expect((await stateOf()).state).toBe('held');

    const fixed = await cli(['shops', 'reconnect', '--shop', shopId, '--domain', 'CLI-Right-Shop.myshopify.com'], {
      env: storeEnv,
    });
    expect(fixed.code).toBe(0);
    expect(fixed.json).toMatchObject({
      shop_id: shopId,
      domain: 'cli-right-shop.myshopify.com',
      previous_domain: 'cli-typo-shop.myshopify.com',
      previous_connection_status: 'not_found',
      connection_status: 'connected',
      released_held_events: 1,
    });
    // The worker calls the corrected domain, which the sandbox answers: the event is delivered once, there.
    await waitFor(async () => (await stateOf()).state === 'delivered', 'the event delivered to the corrected domain');
    const triggers = s.runtime.sandbox!.triggers.filter((t) => t.payload['Flowport event id'] === eventId);
    expect(triggers.map((t) => t.shop)).toEqual(['cli-right-shop.myshopify.com']);

    const audit = await db.get<{ actor_kind: string; details_json: string }>(
      "SELECT actor_kind, details_json FROM audit_log WHERE action = 'shop.reconnect' AND target_id = ?",
      [shopId],
    );
    expect(audit?.actor_kind).toBe('operator');
    expect(JSON.parse(audit!.details_json)).toEqual({
      previous_status: 'not_found',
      released_held_events: 1,
      access_token_replaced: false,
      domain: { from: 'cli-typo-shop.myshopify.com', to: 'cli-right-shop.myshopify.com' },
    });
    const verified = await cli(['audit', 'verify'], { env: storeEnv });
    expect(verified.json.ok).toBe(true);
  });
});

describe('a long-running operator command', () => {
  it('`sandbox` serves until SIGINT, and the CLI waits for it to stop before exiting 0', async () => {
    const child = spawn(NODE, [BIN, 'sandbox', '--port', '0'], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const started = new Promise<{ sandbox: string; triggers: string }>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        const line = out.split('\n')[0];
        if (out.includes('\n') && line) resolve(JSON.parse(line));
      });
      child.on('exit', (code) => reject(new Error(`sandbox exited early with ${code}: ${out}`)));
    });
    const info = await started;
    const res = await fetch(info.triggers);
    expect(res.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(JSON.parse(out.slice(out.indexOf('\n') + 1))).toEqual({ stopped: true });
  });
});

describe('secrets', () => {
  it('a rotated secret appears only in the confirmation', async () => {
    const ep = s.sandbox!.endpoint_id;
    const preview = await cli(['preview-secret-rotate', ep, '--overlap-hours', '1'], { env });
    expect(preview.code).toBe(0);
    const confirm = await cli(['confirm-action-intent', preview.json.id, '--idempotency-key', 'cli-rotate-1'], {
      env,
    });
    expect(confirm.code).toBe(0);
    oneTime.rotatedSecret = confirm.json.result.secret;
    expect(oneTime.rotatedSecret.length).toBeGreaterThan(16);
    await cli(['get-action-intent', preview.json.id], { env });
    await cli(['get-action-intent', preview.json.id], { env, tty: true });
    await cli(['get-endpoint', ep], { env, tty: true });
  });

  it('no output ever shows a grant token or a signing secret, except the one-time ones where they are created', () => {
    const created = (r: Run, secret: string) => `${r.stdout}${r.stderr}`.includes(secret);
    expect(RUNS.length).toBeGreaterThan(40);
    const fixed = [
      s.sandbox!.grant_token,
      s.sandbox!.signing_secret,
      observerToken,
      expiredToken,
      IMPORTED_STRIPE_SECRET,
    ];
    const all = outputsExcept(() => false);
    for (const secret of fixed) expect(all.includes(secret)).toBe(false);
    const grantRuns = RUNS.filter((r) => created(r, oneTime.grantToken));
    expect(grantRuns.map((r) => r.args.slice(0, 2).join(' '))).toEqual(['grants create']);
    const endpointRuns = RUNS.filter((r) => created(r, oneTime.endpointSecret));
    expect(endpointRuns.map((r) => r.args.slice(0, 2).join(' '))).toEqual(['endpoints create']);
    const rotateRuns = RUNS.filter((r) => created(r, oneTime.rotatedSecret));
    expect(rotateRuns.map((r) => r.args.slice(0, 1).join(' '))).toEqual(['confirm-action-intent']);
  });
});

// Refusals say how to fix them (issue 43, item 6): the problem's next steps start with the ones the
// error catalog names for the code (the field to send, the operation to read, the merchant page),
// generic ones last; the CLI's readable refusal shows the API's `detail`, the reason and the exact
// command with the flag that fixes it; with --json every error is JSON, argument errors included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG, ERROR_CODES } from '../../api/src/errors/catalog.ts';
import { nextSteps } from '../../api/src/errors/problem.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { deliveredEvent } from '../intents/helpers.ts';
import { cli } from './helpers.ts';

let s: TestServer;
let env: Record<string, string>;
let eventId: string;

beforeAll(async () => {
  s = await startTestServer();
  env = { FLOWPORT_BASE_URL: s.url, FLOWPORT_TOKEN: s.sandbox?.grant_token ?? '' };
  eventId = await deliveredEvent(s);
}, 60_000);

afterAll(async () => {
  await s?.close();
});

describe('the catalog names the steps that fix a code', () => {
  it('specific steps come first, generic ones last, and every step names a real field or operation', () => {
    const steps = nextSteps('https://f.example', 'replay_recent_delivery');
    expect(steps[0]).toMatchObject({ kind: 'retry_with', field: 'acknowledge_recent_delivery', value: true });
    expect(steps.map((x) => x.kind).slice(-4)).toEqual(['docs', 'manifest', 'openapi', 'ask_human']);
    const merchant = nextSteps('https://f.example', 'missing_scope').find((x) => x.kind === 'merchant_page');
    expect(merchant?.url).toBe('https://f.example/merchant');
    const ids = new Set(OPERATIONS.map((op) => op.operationId));
    const fields = new Set(
      OPERATIONS.flatMap((op) => Object.keys((op.request.body as { shape?: object } | undefined)?.shape ?? {})),
    );
    let specific = 0;
    for (const code of ERROR_CODES) {
      for (const step of (ERROR_CATALOG[code] as { steps?: { kind: string; operation?: string; field?: string }[] })
        .steps ?? []) {
        specific++;
        if (step.kind === 'call') expect(ids, `${code}: ${step.operation}`).toContain(step.operation);
        if (step.kind === 'retry_with') expect(fields, `${code}: ${step.field}`).toContain(step.field);
      }
    }
    expect(specific).toBeGreaterThan(10);
  });
});

describe('the CLI', () => {
  it("shows a refusal's detail, its reason and the exact command with the flag that fixes it", async () => {
    const r = await cli(['preview-replay', eventId], { env, tty: true });
    expect(r.code).toBe(4);
    const out = r.stdout;
    expect(out).toContain('Refused (safety):');
    expect(out).toContain('replay_recent_delivery (HTTP 409)');
    // The API's detail, not only the reason.
    const problem = (await cli(['preview-replay', eventId, '--json'], { env })).json;
    expect(problem.code).toBe('replay_recent_delivery');
    expect(out).toContain(problem.detail);
    expect(problem.refusal.next_steps[0]).toMatchObject({ kind: 'retry_with', field: 'acknowledge_recent_delivery' });
    // The fix, as a command that runs as printed, before the generic steps.
    const fix = `npx flowport preview-replay ${eventId} --acknowledge-recent-delivery`;
    expect(out).toContain(fix);
    expect(out).toContain(`npx flowport get-event ${eventId}`);
    expect(out.indexOf(fix)).toBeLessThan(out.indexOf('Check the manifest'));
    // And it works: the preview with the flag is made.
    const again = await cli(['preview-replay', eventId, '--acknowledge-recent-delivery', '--json'], { env });
    expect(again.code).toBe(0);
    expect(again.json.state).toBe('previewed');
  });

  it('a refusal whose fix is a field the command lacks names the field, and never offers a flag it cannot take', async () => {
    // The same code met at confirmation: the flag belongs to the preview, not to confirm-action-intent.
    const { renderProblem } = await import('../../api/src/cli/output.ts');
    const problem = (await cli(['preview-replay', eventId, '--json'], { env })).json;
    const text = renderProblem(409, problem, '', {
      rerun: () => null,
      command: () => null,
    });
    expect(text).toContain('acknowledge_recent_delivery: true');
    expect(text).toContain('--acknowledge-recent-delivery');
    expect(text).not.toContain('npx flowport confirm-action-intent');
  });

  it('with --json, argument and connection errors are JSON too', async () => {
    // On a terminal too: --json asks for JSON (stdout), the sentence stays on stderr.
    const bad = await cli(['list-endpoints', '--status', 'bogus', '--json'], { env });
    expect(bad.code).toBe(2);
    expect(bad.json.error).toMatchObject({ kind: 'usage', exit_code: 2 });
    expect(bad.json.error.detail).toContain('--status must be one of');
    expect(bad.json.error.help).toBe('npx flowport list-endpoints --help');
    expect(bad.stderr).toContain('--status must be one of');
    const unknown = await cli(['list-evnts', '--json'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.json.error.detail).toContain('Did you mean `list-events`');
    const away = await cli(['get-grant', '--json'], { env: { ...env, FLOWPORT_BASE_URL: 'http://127.0.0.1:9' } });
    expect(away.code).toBe(7);
    expect(away.json.error).toMatchObject({ kind: 'unreachable', exit_code: 7 });
  });
});

// Task pages you can finish from the page (issue 29, point 2): every shell block a page marks
// runnable (a fence opened with ```sh runnable) is executed, in page order, against a real
// Flowport in sandbox mode (real HTTP on loopback, real store, the real `flowport` CLI and curl),
// so a page that lies fails. Placeholders are filled the way a reader fills them:
//   http://localhost:8787  → the test server's URL
//   <GRANT_TOKEN>          → the sandbox grant's token (FLOWPORT_TOKEN is set to it too), or, after
//                            a block printed a new grant's `token`, that one
//   <SHOP_ID>              → the sandbox shop
//   <ENDPOINT_ID>, <EVENT_ID>, <INTENT_ID> → the newest `ep_…`, `evt_…`, `int_…` id an earlier
//                            block printed (at the start: the sandbox endpoint and one delivered event)
//   <IDEMPOTENCY_KEY>      → a fresh UUID per block
// Each block must exit 0 and print JSON. When the page shows the answer (a ```json block right
// after the command, or a recorded answer the generator puts there), every key it shows must be in the real answer, and the values of the keys
// that name an outcome (`state`, `status`, `kind`, `object`, `code`) must be the same.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readRecordings } from '../../api/src/http/openapi-examples.ts';
import { directiveAnswer, RECORDED_DIRECTIVE } from '../../scripts/docs/lib/recorded-examples.ts';
import { waitFor } from '../handoff/helpers.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

const CONTENT = join(REPO_ROOT, 'content');
const RECORDINGS = readRecordings();
const OUTCOME_KEYS = new Set(['state', 'status', 'kind', 'object', 'code']);

interface RunnableBlock {
  line: number;
  script: string;
  /** The answer the page shows right after the command, parsed; null when it shows none. */
  answer: unknown;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? markdownFiles(join(dir, d.name)) : d.name.endsWith('.md') ? [join(dir, d.name)] : [],
  );
}

/** The runnable blocks of a page, in order, each with the answer block that follows it. */
function runnableBlocks(markdown: string): RunnableBlock[] {
  const fence = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  const blocks: { info: string; body: string; start: number; end: number }[] = [];
  for (const m of markdown.matchAll(fence)) {
    blocks.push({ info: (m[1] ?? '').trim(), body: m[2] ?? '', start: m.index, end: m.index + m[0].length });
  }
  const out: RunnableBlock[] = [];
  blocks.forEach((b, i) => {
    const [lang, ...meta] = b.info.split(/\s+/);
    if (!(lang === 'sh' && meta.includes('runnable'))) return;
    const next = blocks[i + 1];
    // The answer belongs to the command when only prose without another heading lies between them:
    // a ```json block, or a recorded answer the generator puts there (<!-- generated:recorded-answer:… -->).
    const between = markdown.slice(b.end, next ? next.start : markdown.length);
    const untilHeading = between.split(/^#/m)[0] ?? '';
    const directive = [...untilHeading.matchAll(RECORDED_DIRECTIVE)].find((m) => m[1] === 'recorded-answer');
    const isAnswer = next && next.info.split(/\s+/)[0] === 'json' && !/^#/m.test(between);
    out.push({
      line: markdown.slice(0, b.start).split('\n').length,
      script: b.body,
      answer: directive
        ? directiveAnswer(RECORDINGS, { ref: directive[2] as string, keys: directive[3]?.split(',') ?? [] })
        : isAnswer
          ? JSON.parse(next.body)
          : null,
    });
  });
  return out;
}

/** Keys (dotted) the page shows that the real answer lacks, or outcome values that differ. */
function disagreements(shown: unknown, real: unknown, at = ''): string[] {
  if (shown === null || typeof shown !== 'object' || Array.isArray(shown)) return [];
  if (real === null || typeof real !== 'object' || Array.isArray(real)) return [`${at || '(root)'}: not an object`];
  const out: string[] = [];
  for (const [k, v] of Object.entries(shown)) {
    const path = at ? `${at}.${k}` : k;
    if (!(k in real)) {
      out.push(`${path}: missing`);
      continue;
    }
    const r = (real as Record<string, unknown>)[k];
    if (OUTCOME_KEYS.has(k) && (typeof v === 'string' || typeof v === 'number') && v !== r)
      out.push(`${path}: page says ${JSON.stringify(v)}, product says ${JSON.stringify(r)}`);
    out.push(...disagreements(v, r, path));
  }
  return out;
}

/** Every `ep_…`, `evt_…`, `int_…` id in an answer, in document order. */
function idsIn(value: unknown, found: Record<string, string[]> = { ep: [], evt: [], int: [] }) {
  if (typeof value === 'string') {
    const m = /^(ep|evt|int)_[0-9a-z]{10,}$/.exec(value);
    if (m) found[m[1] as string]?.push(value);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) idsIn(v, found);
  }
  return found;
}

const PAGES = markdownFiles(CONTENT)
  .map((file) => ({ page: relative(CONTENT, file), blocks: runnableBlocks(readFileSync(file, 'utf8')) }))
  .filter((p) => p.blocks.length > 0);

/** Runs a script with bash without blocking the event loop (the server answers from this process). */
function bash(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: REPO_ROOT, env, timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

it('the task pages have runnable blocks, and answers shown after them', () => {
  const pages = PAGES.map((p) => p.page).sort();
  for (const page of [
    'start/first-endpoint.md',
    'start/first-test-event.md',
    'recover/replay.md',
    'set-up/secret-rotation.md',
    'recover/diagnostics-share.md',
    'agent-access/grants-and-scopes.md',
    'agent-access/mcp-setup.md',
    // What merchants ask (issue 43, item 5).
    'recover/workflow-ran-twice.md',
    'recover/sender-refused.md',
    'recover/workflow-was-off.md',
  ]) {
    expect(pages).toContain(page);
  }
  expect(PAGES.every((p) => p.blocks.some((b) => b.answer !== null))).toBe(true);
});

it('the comparison catches a page that shows a key or an outcome the product does not answer', () => {
  expect(disagreements({ state: 'previewed', id: 'int_x' }, { state: 'previewed', id: 'int_y' })).toEqual([]);
  expect(disagreements({ state: 'executed' }, { state: 'previewed' })).toHaveLength(1);
  expect(disagreements({ preview: { summary: 's' } }, { preview: {} })).toEqual(['preview.summary: missing']);
});

describe.each(PAGES)('runnable blocks of $page', ({ page, blocks }) => {
  it('run against a sandbox Flowport and answer what the page shows', async () => {
    server = await startTestServer();
    const creds = server.sandbox;
    expect(creds).not.toBeNull();
    if (!creds) return;
    // The state the Quickstart leaves: the banner's signed event sent and delivered.
    const sent = await bash(creds.curl, process.env);
    const eventId = (JSON.parse(sent.stdout) as { event_id: string }).event_id;
    const s = server;
    await waitFor(
      async () =>
        (await s.runtime.services.db.get<{ state: string }>('SELECT state FROM events WHERE id = ?', [eventId]))
          ?.state === 'delivered',
      'the sample event delivered',
    );
    const latest: Record<string, string> = { ep: creds.endpoint_id, evt: eventId, int: '' };
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...server.storeEnv,
      PATH: `${join(REPO_ROOT, 'node_modules/.bin')}:${process.env.PATH}`,
      FLOWPORT_BASE_URL: server.url,
      FLOWPORT_TOKEN: creds.grant_token,
      NO_COLOR: '1',
    };
    for (const block of blocks) {
      const script = block.script
        .replaceAll('http://localhost:8787', server.url)
        .replaceAll('<GRANT_TOKEN>', env.FLOWPORT_TOKEN as string)
        .replaceAll('<SHOP_ID>', creds.shop_id)
        .replaceAll('<ENDPOINT_ID>', latest.ep as string)
        .replaceAll('<EVENT_ID>', latest.evt as string)
        .replaceAll('<INTENT_ID>', latest.int as string)
        .replaceAll('<IDEMPOTENCY_KEY>', randomUUID());
      expect(script, `${page}:${block.line} has a placeholder the test cannot fill`).not.toMatch(/<[A-Z_]+>/);
      const r = await bash(script, env);

      const where = `${page}:${block.line}\n${script}\nstderr: ${r.stderr}\nstdout: ${r.stdout}`;
      expect(r.status, where).toBe(0);
      let answer: unknown;
      expect(() => {
        answer = JSON.parse(r.stdout);
      }, where).not.toThrow();
      if (block.answer !== null) expect(disagreements(block.answer, answer), where).toEqual([]);
      // A block that issues a grant hands its token on, as a reader would use the new token.
      const token = (answer as { token?: unknown } | null)?.token;
      if (typeof token === 'string' && token.startsWith('fpg_')) env.FLOWPORT_TOKEN = token;
      for (const [prefix, ids] of Object.entries(idsIn(answer))) {
        // The object the block answered with comes first: its own id is the one to carry on.
        const own = (answer as { id?: unknown } | null)?.id;
        const pick = typeof own === 'string' && own.startsWith(`${prefix}_`) ? own : ids.at(-1);
        if (pick) latest[prefix] = pick;
      }
    }
  }, 300_000);
});

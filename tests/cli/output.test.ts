// The terminal-side pieces that the end-to-end tests cannot pin down: the
// progress indicator (drawn only on a terminal, only for slow work, always
// erased) and the exit-code mapping of HTTP answers.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EXIT, exitCodeForHttp } from '../../api/src/cli/exit-codes.ts';
import { type CliIO, withProgress } from '../../api/src/cli/io.ts';
import { renderProblem, renderTable } from '../../api/src/cli/output.ts';
import { withoutSpinner } from './helpers.ts';

function io(tty: boolean): CliIO & { raw: string[] } {
  const raw: string[] = [];
  return { raw, out: () => {}, err: () => {}, env: {}, stderrIsTTY: tty, errRaw: (t) => raw.push(t) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('progress indicator', () => {
  it('draws the label on a terminal once work is slow, and erases it before returning', async () => {
    vi.useFakeTimers();
    const t = io(true);
    let finish: (v: string) => void = () => {};
    const running = withProgress(t, 'GET /agent/v1/events', () => new Promise<string>((r) => (finish = r)));
    await vi.advanceTimersByTimeAsync(100);
    expect(t.raw).toEqual([]);
    await vi.advanceTimersByTimeAsync(500);
    expect(t.raw.some((w) => w.includes('GET /agent/v1/events'))).toBe(true);
    const drawn = t.raw.length;
    finish('done');
    expect(await running).toBe('done');
    expect(t.raw.length).toBe(drawn + 1);
    expect(t.raw.at(-1)).toBe('\r\x1b[2K');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.raw.length).toBe(drawn + 1);
  });

  it('draws nothing for fast work or when stderr is not a terminal, and passes errors through', async () => {
    vi.useFakeTimers();
    const fast = io(true);
    expect(await withProgress(fast, 'x', async () => 1)).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(fast.raw).toEqual([]);
    const piped = io(false);
    const slow = withProgress(piped, 'x', () => new Promise((r) => setTimeout(() => r(2), 2_000)));
    await vi.advanceTimersByTimeAsync(2_500);
    expect(await slow).toBe(2);
    expect(piped.raw).toEqual([]);
    const failing = io(true);
    const boom = withProgress(
      failing,
      'x',
      () => new Promise((_, reject) => setTimeout(() => reject(new Error('boom')), 1_000)),
    );
    const caught = boom.catch((e: Error) => e.message);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(await caught).toBe('boom');
    expect(failing.raw.at(-1)).toBe('\r\x1b[2K');
  });

  it('whatever it draws, the terminal tests see only the output after it (tests/cli/helpers.ts withoutSpinner)', async () => {
    // Under a pseudo-terminal the spinner's frames share the stream with stdout; how many land
    // there depends on the machine's speed. The end-to-end helper removes exactly what this draws.
    vi.useFakeTimers();
    const t = io(true);
    let finish: (v: string) => void = () => {};
    const running = withProgress(t, 'GET /agent/v1/events/evt_1', () => new Promise<string>((r) => (finish = r)));
    await vi.advanceTimersByTimeAsync(2_000);
    finish('done');
    await running;
    expect(t.raw.length).toBeGreaterThan(10);
    const output = 'ID    STATE\nevt_1 delivered\n{"id":"evt_1"}\n';
    expect(withoutSpinner(`${t.raw.join('')}${output}`)).toBe(output);
    expect(withoutSpinner(`${t.raw.slice(0, 3).join('')}${t.raw.at(-1)}${output}`)).toBe(output);
  });
});

describe('exit codes for HTTP answers', () => {
  it('maps 401, 404, refusals, 5xx, bad input and the rest', () => {
    expect(exitCodeForHttp(401, { refusal: { layer: 'authority' } })).toBe(EXIT.auth.code);
    expect(exitCodeForHttp(404, null)).toBe(EXIT.notFound.code);
    expect(exitCodeForHttp(403, { refusal: { layer: 'authority' } })).toBe(EXIT.refusal.code);
    expect(exitCodeForHttp(429, { refusal: { layer: 'usage' } })).toBe(EXIT.refusal.code);
    expect(exitCodeForHttp(402, { refusal: { layer: 'usage' } })).toBe(EXIT.refusal.code);
    expect(exitCodeForHttp(503, { refusal: undefined })).toBe(EXIT.server.code);
    expect(exitCodeForHttp(502, null)).toBe(EXIT.server.code);
    expect(exitCodeForHttp(400, {})).toBe(EXIT.usage.code);
    expect(exitCodeForHttp(422, {})).toBe(EXIT.failed.code);
  });
});

describe('readable output', () => {
  it('tables keep the important columns first and say how many were left out', () => {
    const out = renderTable(
      [
        { body_sha256: 'a'.repeat(64), received_at: '2026-01-01T00:00:00Z', state: 'failed', id: 'evt_1' },
        { body_sha256: 'b'.repeat(64), received_at: '2026-01-02T00:00:00Z', state: 'delivered', id: 'evt_2' },
      ],
      60,
    );
    const [head, first] = out.split('\n');
    expect(head).toMatch(/^ID\s+STATE\s+RECEIVED_AT$/);
    expect(first).toMatch(/^evt_1\s+failed\s+2026-01-01T00:00:00Z$/);
    expect(out).toContain('(1 more field(s) per row; --json shows everything)');
  });

  it('a problem without a refusal still names its code and docs page', () => {
    const text = renderProblem(
      404,
      { status: 404, code: 'not_found', title: 'Resource not found', detail: 'No event x.', docs_url: 'https://d/x/' },
      '',
    );
    expect(text).toContain('Error: Resource not found — No event x.');
    expect(text).toContain('not_found (HTTP 404)');
    expect(text).toContain('Next step: read https://d/x/');
    expect(renderProblem(502, null, '<html>bad gateway</html>')).toContain('HTTP 502 without a problem body');
  });
});

// `flowport watch-action-intent <intent_id>`: follows a running action intent (a bulk replay) until it
// ends, with a progress bar on a terminal; otherwise prints the final intent as JSON. Reads go
// through the Agent API with the grant, like every agent command (one read per interval).
import { AGENT_API_PREFIX } from '../lib/package-info.ts';
import { type Connection, request } from './client.ts';
import { EXIT, exitCodeForHttp } from './exit-codes.ts';
import type { CliIO } from './io.ts';
import { type ProblemView, renderProblem } from './output.ts';

interface Progress {
  total: number;
  done: number;
  replayed: number;
  refused: number;
  cancelled: number;
  estimated_seconds_left: number | null;
}
interface Watched {
  id: string;
  kind: string;
  state: string;
  progress?: Progress;
}

const RUNNING = new Set(['confirmed']);
const BAR = 30;

/** `[##########----------]  40% 400/1000 (replayed 398, refused 2) ~12 s left` */
export function progressLine(p: Progress): string {
  const share = p.total === 0 ? 1 : p.done / p.total;
  const filled = Math.round(share * BAR);
  const left = p.estimated_seconds_left && p.done < p.total ? ` ~${p.estimated_seconds_left} s left` : '';
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% ${p.done}/${p.total} (replayed ${p.replayed}, refused ${p.refused}${p.cancelled ? `, cancelled ${p.cancelled}` : ''})${left}`;
}

export async function watchIntent(
  conn: Connection,
  io: CliIO,
  intentId: string,
  options: { json: boolean; intervalMs: number },
): Promise<number> {
  const tty = io.stderrIsTTY === true && typeof io.errRaw === 'function' && !options.json;
  for (;;) {
    const res = await request(conn, {
      method: 'GET',
      path: `${AGENT_API_PREFIX}/action-intents/${encodeURIComponent(intentId)}`,
    });
    if (!res.ok) {
      const problem = (res.json && typeof res.json === 'object' ? res.json : null) as ProblemView | null;
      if (tty) io.errRaw?.('\n');
      if (options.json) io.out(JSON.stringify(problem ?? { status: res.status }, null, 2));
      else io.err(renderProblem(res.status, problem, res.text));
      return exitCodeForHttp(res.status, problem);
    }
    const intent = res.json as Watched;
    if (tty && intent.progress) io.errRaw?.(`\r\x1b[2K${progressLine(intent.progress)}`);
    if (!RUNNING.has(intent.state)) {
      if (tty) io.errRaw?.('\n');
      if (options.json) io.out(JSON.stringify(intent, null, 2));
      else
        io.out(
          `${intent.kind} ${intent.id}: ${intent.state}${intent.progress ? ` — ${progressLine(intent.progress)}` : ''}`,
        );
      return EXIT.ok.code;
    }
    await new Promise((r) => setTimeout(r, options.intervalMs));
  }
}

// Readable output for terminals: any API answer as aligned key/value blocks and
// tables, and problems (refusals above all) as reason, docs URL and next steps.
// When stdout is not a terminal the CLI prints JSON instead and none of this runs.

type Obj = Record<string, unknown>;

const MAX_CELL = 40;
/** Columns that say most about a row come first; the rest keep the API's order. */
const PRIORITY = [
  'id',
  'state',
  'status',
  'kind',
  'name',
  'event_type',
  'sender',
  'meter',
  'used',
  'limit',
  'remaining',
  'scope',
  'check',
  'action',
  'outcome',
  'summary',
  'title',
  'received_at',
  'created_at',
  'at',
];

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isScalar(v: unknown): boolean {
  return v === null || v === undefined || ['string', 'number', 'boolean'].includes(typeof v);
}

export function scalar(v: unknown): string {
  if (v === null || v === undefined || v === '') return '—';
  return String(v);
}

function truncate(s: string, max: number): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** Rows flattened one level (`replay.available`), so small nested objects still show in a table. */
function flatRow(row: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(row)) {
    if (isObj(v) && Object.values(v).every(isScalar)) {
      for (const [k2, v2] of Object.entries(v)) out[`${k}.${k2}`] = v2;
    } else out[k] = v;
  }
  return out;
}

export function renderTable(rows: readonly Obj[], width = 120, indent = ''): string {
  if (rows.length === 0) return `${indent}(none)`;
  const flat = rows.map(flatRow);
  const keys: string[] = [];
  for (const r of flat) for (const k of Object.keys(r)) if (!keys.includes(k)) keys.push(k);
  const usable = keys.filter(
    (k) =>
      flat.every((r) => isScalar(r[k]) || (Array.isArray(r[k]) && (r[k] as unknown[]).every(isScalar))) &&
      flat.some((r) => r[k] !== null && r[k] !== undefined && r[k] !== ''),
  );
  const rank = (k: string) => {
    const i = PRIORITY.indexOf(k);
    return i === -1 ? PRIORITY.length + keys.indexOf(k) : i;
  };
  usable.sort((a, b) => rank(a) - rank(b));
  const cell = (r: Obj, k: string) => {
    const v = r[k];
    return truncate(Array.isArray(v) ? v.map(scalar).join(', ') : scalar(v), MAX_CELL);
  };
  const chosen: { key: string; width: number }[] = [];
  let total = indent.length;
  for (const k of usable) {
    const w = Math.max(k.length, ...flat.map((r) => cell(r, k).length));
    if (chosen.length >= 2 && total + w + 2 > width) continue;
    chosen.push({ key: k, width: w });
    total += w + 2;
  }
  const line = (vals: string[]) =>
    `${indent}${vals
      .map((v, i) => (i === vals.length - 1 ? v : v.padEnd(chosen[i]?.width ?? 0)))
      .join('  ')}`.trimEnd();
  const out = [
    line(chosen.map((c) => c.key.toUpperCase())),
    ...flat.map((r) => line(chosen.map((c) => cell(r, c.key)))),
  ];
  const hidden = usable.length - chosen.length + (keys.length - usable.length);
  if (hidden > 0) out.push(`${indent}(${hidden} more field(s) per row; --json shows everything)`);
  return out.join('\n');
}

function renderBlock(value: Obj, width: number, indent: string): string[] {
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  const pad = Math.min(32, Math.max(0, ...entries.map(([k]) => k.length)));
  const lines: string[] = [];
  for (const [k, v] of entries) {
    const label = `${indent}${k.padEnd(pad)}`;
    if (isScalar(v)) lines.push(`${label}  ${scalar(v)}`);
    else if (Array.isArray(v)) {
      if (v.length === 0) lines.push(`${label}  (none)`);
      else if (v.every(isScalar)) lines.push(`${label}  ${v.map(scalar).join(', ')}`);
      else if (v.every(isObj) && v.every((r) => Object.values(flatRow(r)).every(isScalar)))
        lines.push(`${indent}${k}`, renderTable(v as Obj[], width, `${indent}  `));
      else {
        lines.push(`${indent}${k}`);
        for (const item of v) {
          if (isObj(item)) {
            const block = renderBlock(item, width, `${indent}    `);
            lines.push(`${indent}  - ${(block[0] ?? '').trimStart()}`, ...block.slice(1));
          } else lines.push(`${indent}  - ${scalar(item)}`);
        }
      }
    } else if (isObj(v)) {
      if (Object.keys(v).length === 0) lines.push(`${label}  (none)`);
      else lines.push(`${indent}${k}`, ...renderBlock(v, width, `${indent}  `));
    }
  }
  return lines;
}

/** Any JSON answer as text: lists (`{ data: [...] }`) as a table, objects as aligned blocks. */
export function renderReadable(value: unknown, width = 120): string {
  if (isScalar(value)) return scalar(value);
  if (Array.isArray(value)) {
    if (value.every(isObj)) return renderTable(value as Obj[], width);
    return value.map(scalar).join('\n');
  }
  const obj = value as Obj;
  if (Array.isArray(obj.data) && obj.data.every(isObj)) {
    const { data, ...rest } = obj;
    const parts = [renderTable(data as Obj[], width)];
    if (Object.keys(rest).length) parts.push('', ...renderBlock(rest, width, ''));
    return parts.join('\n');
  }
  return renderBlock(obj, width, '').join('\n');
}

export interface NextStepView {
  kind: string;
  description: string;
  url?: string;
  field?: string;
  value?: string | number | boolean;
  operation_id?: string;
}

export interface ProblemView {
  status?: number;
  title?: string;
  detail?: string;
  code?: string;
  docs_url?: string;
  request_id?: string;
  errors?: { path: string; message: string }[];
  refusal?: {
    layer: string;
    reason: string;
    required_scope?: string;
    retry_after_s?: number;
    next_steps?: NextStepView[];
  };
}

/** What the command just run lets a refusal print as exact commands (the CLI fills it in). */
export interface ProblemContext {
  /** The command just run with one more option, as typed in a checkout; null when it takes no such option. */
  rerun: (option: string) => string | null;
  /** The command line of an operation, with the arguments this run knows filled in; null when there is none. */
  command: (operationId: string) => string | null;
}

const NO_CONTEXT: ProblemContext = { rerun: () => null, command: () => null };

/** `acknowledge_recent_delivery: true` → `--acknowledge-recent-delivery` (a switch), else `--flag value`. */
export function optionFor(field: string, value: unknown): string {
  const flag = `--${field.replace(/_/g, '-')}`;
  return value === true ? flag : `${flag} ${String(value)}`;
}

/** A step that fixes the code, with the command that does it when the CLI can name one. */
function fixLines(step: NextStepView, ctx: ProblemContext): string[] {
  if (step.kind === 'retry_with' && step.field !== undefined) {
    const option = optionFor(step.field, step.value);
    const rerun = ctx.rerun(option);
    return rerun
      ? [step.description, `$ ${rerun}`]
      : [
          step.description,
          `(CLI: ${option} on the preview command; API and MCP: ${step.field}: ${JSON.stringify(step.value)})`,
        ];
  }
  if (step.kind === 'call' && step.operation_id) {
    const line = ctx.command(step.operation_id);
    return line ? [step.description, `$ ${line}`] : [`${step.description} (${step.operation_id})`];
  }
  return [`${step.description}${step.url ? ` ${step.url}` : ''}`];
}

/**
 * A problem answer for people: what happened and why (the refusal's reason and the API's detail),
 * the docs page, then the steps that fix this code as commands to type, and the generic steps last.
 */
export function renderProblem(
  status: number,
  problem: ProblemView | null,
  rawText: string,
  ctx: ProblemContext = NO_CONTEXT,
): string {
  if (!problem || typeof problem.code !== 'string') {
    return `Flowport answered HTTP ${status} without a problem body: ${truncate(rawText || '(empty)', 200)}`;
  }
  const lines: string[] = [];
  const r = problem.refusal;
  if (r) {
    lines.push(`Refused (${r.layer}): ${r.reason}`);
    if (problem.detail && problem.detail !== r.reason) lines.push(`  ${problem.detail}`);
  } else lines.push(`Error: ${problem.title ?? problem.code}${problem.detail ? ` — ${problem.detail}` : ''}`);
  const facts: [string, string][] = [['code', `${problem.code} (HTTP ${problem.status ?? status})`]];
  if (r?.required_scope) facts.push(['needs scope', r.required_scope]);
  if (r?.retry_after_s !== undefined) facts.push(['retry after', `${r.retry_after_s} s`]);
  if (problem.docs_url) facts.push(['docs', problem.docs_url]);
  if (problem.request_id) facts.push(['request id', problem.request_id]);
  for (const [k, v] of facts) lines.push(`  ${k.padEnd(11)}  ${v}`);
  for (const e of problem.errors ?? []) lines.push(`  ${e.path || '(body)'}: ${e.message}`);
  const steps = r?.next_steps ?? [];
  const GENERIC = new Set(['docs', 'manifest', 'openapi', 'ask_human']);
  const fixes = steps.filter((s) => !GENERIC.has(s.kind));
  const generic = steps.filter((s) => GENERIC.has(s.kind));
  let n = 0;
  if (fixes.length) {
    lines.push('To fix it:');
    for (const step of fixes) {
      const [first, ...more] = fixLines(step, ctx);
      lines.push(`  ${++n}. ${first}`, ...more.map((m) => `     ${m}`));
    }
  }
  if (generic.length) {
    lines.push(fixes.length ? 'Then:' : 'Next steps:');
    for (const step of generic) lines.push(`  ${++n}. ${step.description}${step.url ? ` ${step.url}` : ''}`);
  } else if (!fixes.length && problem.docs_url) lines.push(`Next step: read ${problem.docs_url}`);
  return lines.join('\n');
}

/**
 * An error the CLI met on its side (a usage error, an unreachable server, a failure with no API
 * answer) as JSON, for `--json`: `error.kind` is the exit code's name. An answer from Flowport is
 * printed as its problem object instead (it has `code`).
 */
export function cliErrorJson(kind: string, exitCode: number, detail: string, help?: string): string {
  return JSON.stringify({ error: { kind, exit_code: exitCode, detail, ...(help ? { help } : {}) } }, null, 2);
}

export interface IntentView {
  id: string;
  kind: string;
  state: string;
  target?: { type: string; id: string | null };
  preview?: { summary?: string; effects?: string[]; warnings?: string[] };
  meter_cost?: {
    preview: number;
    execution: number;
    replays?: number;
    diagnostics_shares?: number;
    cap: { meter: string; cost: number; used_at_preview: number; limit: number } | null;
  };
  required_scope?: string;
  expires_at?: string;
  confirmed_at?: string | null;
  finished_at?: string | null;
  result?: unknown;
  error_code?: string | null;
}

/** An action intent for people: what it will do (or did), its cost, and its state; details stay in --json. */
export function renderIntent(i: IntentView, width = 120): string {
  const lines = [`Action intent ${i.id}: ${i.kind}, ${i.state}`];
  const fact = (k: string, v: string) => lines.push(`  ${k.padEnd(14)}  ${v}`);
  if (i.target) fact('target', `${i.target.type} ${i.target.id ?? '(new)'}`);
  if (i.preview?.summary) fact('summary', i.preview.summary);
  if (i.preview?.effects?.length) {
    lines.push('  effects');
    for (const e of i.preview.effects) lines.push(`    - ${e}`);
  }
  if (i.preview?.warnings?.length) {
    lines.push('  warnings');
    for (const w of i.preview.warnings) lines.push(`    ! ${w}`);
  }
  const m = i.meter_cost;
  if (m)
    fact(
      'cost',
      `${m.preview} preview, ${m.execution} execution${m.execution === 1 ? '' : 's'}${m.replays ? `, ${m.replays} replay${m.replays === 1 ? '' : 's'}` : ''}${m.diagnostics_shares ? `, ${m.diagnostics_shares} diagnostics share${m.diagnostics_shares === 1 ? '' : 's'}` : ''}${m.cap ? `; ${m.cap.meter} ${m.cap.used_at_preview}/${m.cap.limit} used at preview` : ''}`,
    );
  if (i.required_scope) fact('confirm needs', i.required_scope);
  if (i.state === 'previewed' && i.expires_at) fact('expires', i.expires_at);
  if (i.confirmed_at) fact('confirmed', i.confirmed_at);
  if (i.finished_at) fact('finished', i.finished_at);
  if (i.error_code) fact('error', i.error_code);
  if (i.result !== null && i.result !== undefined) {
    lines.push('  result');
    lines.push(
      ...renderReadable(i.result, width)
        .split('\n')
        .map((l) => `    ${l}`),
    );
  }
  lines.push('  (parameters, the target as previewed, current config and kind details: --json)');
  return lines.join('\n');
}

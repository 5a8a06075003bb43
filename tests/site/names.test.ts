// Every name a page shows as code exists (issue 43, item 2): a command typed after `flowport`, an
// MCP tool, an operationId, a scope, an error code, a support code. Read from the Markdown twins
// of the built site (hand-written pages and generated reference pages alike, as an LLM reads
// them), in code spans and code blocks, and checked against the registry, the scope vocabulary
// and the error catalog. And every command a page prints runs as printed in a checkout
// (`npx flowport …`, item 3).
import { FORMER_NAMES } from '../../api/src/operations/naming.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../api/src/auth/scopes.ts';
import { cliCommands } from '../../api/src/cli/main.ts';
import { ERROR_CODES } from '../../api/src/errors/catalog.ts';
import { INTAKE_SUPPORT_CODES } from '../../api/src/errors/codes/intake.ts';
import { SUPPORT_CODES } from '../../api/src/handoff/outcomes.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { codeIn, commandProblems, type Names, nameProblems } from './helpers/names.ts';
import { distFiles, ensureSiteBuilt, REPO_ROOT, readDist } from './helpers/site.ts';

beforeAll(ensureSiteBuilt, 900_000);

/** Every property and parameter name of the contract (a name shaped like a tool may be a field). */
function contractFields(): Set<string> {
  const doc = JSON.parse(readFileSync(join(REPO_ROOT, 'openapi/agent-operations.openapi.json'), 'utf8')) as unknown;
  const out = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (o.properties && typeof o.properties === 'object') for (const k of Object.keys(o.properties)) out.add(k);
      if (typeof o.name === 'string' && typeof o.in === 'string') out.add(o.name);
      Object.values(o).forEach(walk);
    }
  };
  walk(doc);
  return out;
}

const NAMES: Names = {
  commands: cliCommands().map((c) => ({ words: c.words, args: c.args.length })),
  // Tools, and the names tools had before the one-name rule: MCP answers those with tool_renamed
  // and the new name (FORMER_NAMES), and the MCP reference lists them so.
  tools: new Set([
    ...OPERATIONS.flatMap((op) => (op.mcp ? [op.mcp.name] : [])),
    ...Object.values(FORMER_NAMES).flatMap((f) => (f.tool ? [f.tool] : [])),
  ]),
  operationIds: new Set(OPERATIONS.map((op) => op.operationId)),
  scopes: new Set(ALL_SCOPES),
  // Flowport's codes, and the OAuth protocol's own `error` values its OAuth endpoints answer with
  // (RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2), which the OAuth page names.
  errorCodes: new Set([
    ...ERROR_CODES,
    ...['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type'],
    ...['invalid_scope', 'access_denied', 'unsupported_response_type', 'server_error', 'temporarily_unavailable'],
    ...['invalid_redirect_uri', 'invalid_client_metadata'],
  ]),
  fields: contractFields(),
  supportCodes: new Set([...Object.values(SUPPORT_CODES), ...Object.values(INTAKE_SUPPORT_CODES)].map((s) => s.code)),
};

const TWINS = () => distFiles().filter((f) => f.endsWith('.md'));

describe('the checker', () => {
  it('finds code spans and blocks, and what they name that does not exist', () => {
    const md = [
      'Run `flowport replay <event_id>`, then `npx flowport intents confirm <intent_id>`.',
      'MCP `replay_event`, operation `replayEvent`, scope `events:write`, refused with `no_such_code`, `FP-X-NOPE`.',
      '```sh',
      'npx flowport get-event evt_1 --json',
      'flowport grants create --shop <SHOP_ID>',
      '```',
    ].join('\n');
    expect(codeIn(md)).toContain('npx flowport get-event evt_1 --json\nflowport grants create --shop <SHOP_ID>\n');
    expect(nameProblems(md, NAMES)).toEqual([
      'command `flowport replay`',
      'command `flowport intents confirm`',
      'MCP tool `replay_event`',
      'operationId `replayEvent`',
      'scope `events:write`',
      'error code `no_such_code`',
      'support code `FP-X-NOPE`',
    ]);
    expect(commandProblems(md)).toEqual(['`flowport replay <event_id>`', '`flowport grants create --shop <SHOP_ID>`']);
    const good = 'Run `npx flowport get-event <event_id>` (MCP `get_event`, `getEvent`, `events:read`); `FP-H-NOFL`.';
    expect(nameProblems(good, NAMES)).toEqual([]);
  });
});

describe('the pages', () => {
  it('name only commands, tools, operations, scopes, error codes and support codes that exist', () => {
    const problems = TWINS().flatMap((f) => nameProblems(readDist(f), NAMES).map((p) => `${f}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('print commands as a checkout runs them (`npx flowport …`)', () => {
    const problems = TWINS().flatMap((f) => commandProblems(readDist(f)).map((p) => `${f}: ${p}`));
    expect(problems).toEqual([]);
  });
});

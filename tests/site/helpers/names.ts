// What a page names in code (spans and blocks), and which of those names do not exist
// (tests/site/names.test.ts). Names are recognised by their shape and the words before them:
//   commands        `flowport <words>` (with or without `npx`), matched against the CLI's commands
//   MCP tools       a snake_case name after "MCP" (or "tool"), or one that starts like a tool
//                   (`get_`, `list_`, `preview_` …) and is no field of the contract
//   operationIds    a camelCase name after "operation", or one that starts like an operation
//   scopes          `<area>:<level>`
//   error codes     a snake_case name after "refused with", "answers", "error", "code" …, a link to
//                   /reference/errors/<code>/, or a `"code"`/`"error_code"` value in a JSON block
//   support codes   `FP-…`

export interface Names {
  commands: { words: readonly string[]; args: number }[];
  tools: ReadonlySet<string>;
  operationIds: ReadonlySet<string>;
  scopes: ReadonlySet<string>;
  errorCodes: ReadonlySet<string>;
  supportCodes: ReadonlySet<string>;
  /** Field and parameter names of the contract: a name shaped like a tool may be one of these. */
  fields?: ReadonlySet<string>;
}

const FENCE = /^(```|~~~)[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm;

/** The page's code: every fenced block's body and every inline code span, in page order. */
export function codeIn(markdown: string): string[] {
  const out: { at: number; code: string }[] = [];
  let last = 0;
  const prose = (text: string, offset: number) => {
    for (const s of text.matchAll(/`([^`\n]+)`/g)) out.push({ at: offset + s.index, code: s[1] as string });
  };
  for (const m of markdown.matchAll(FENCE)) {
    prose(markdown.slice(last, m.index), last);
    out.push({ at: m.index, code: m[2] as string });
    last = m.index + m[0].length;
  }
  prose(markdown.slice(last), last);
  return out.sort((a, b) => a.at - b.at).map((c) => c.code);
}

/** Each inline span with the prose just before it (the words that say what kind of name it is). */
function spansWithContext(markdown: string): { span: string; before: string }[] {
  const prose = markdown.replace(FENCE, '\n');
  return [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => ({
    span: m[1] as string,
    before: prose.slice(Math.max(0, m.index - 40), m.index),
  }));
}

const WORD = /^[a-z][a-z0-9-]*$/;

/** The command words after each `flowport` in a piece of code, with the text it stands in. */
function commandsIn(code: string): { tokens: string[]; text: string; npx: boolean }[] {
  const out: { tokens: string[]; text: string; npx: boolean }[] = [];
  for (const line of code.split('\n')) {
    for (const m of line.matchAll(/(^|[\s`('"=])(npx\s+)?flowport(?=\s+[a-z-])/g)) {
      const rest = line
        .slice(m.index + m[0].length)
        .trim()
        .split(/\s+/);
      const tokens: string[] = [];
      for (const t of rest) {
        // `enable|disable`: either is a word of the command; a word may end a sentence or a span.
        const word = (t.split('|')[0] as string).replace(/[`'",.;:)]+$/, '');
        if (!WORD.test(word)) break;
        tokens.push(word);
        if (word !== t.split('|')[0]) break;
      }
      if (tokens.length) out.push({ tokens, text: line.trim(), npx: Boolean(m[2]) });
    }
  }
  return out;
}

function unknownCommand(tokens: string[], names: Names): boolean {
  const match = names.commands
    .filter((c) => c.words.length <= tokens.length && c.words.every((w, i) => tokens[i] === w))
    .sort((a, b) => b.words.length - a.words.length)[0];
  return !match || tokens.length - match.words.length > match.args;
}

const TOOL_SHAPE = /^(get|list|preview|confirm|cancel|search)_[a-z_]+$/;
const OPERATION_SHAPE = /^(get|list|preview|confirm|cancel|search)[A-Z][A-Za-z]+$/;
const SCOPE_SHAPE = /^[a-z][a-z_]*:(read|write|preview|execute|admin)$/;
const ERROR_CONTEXT =
  /(refused with|refuses with|refusal|answers?|answered|error code|error|code|fails with|failed with|rejected with)\s*(`\d+`\s*)?[:(]?\s*$/i;
const SUPPORT_CODE = /\bFP-[A-Z]+-[A-Z0-9]+\b/g;

/** What the page names in code that does not exist, once each, in page order. */
export function nameProblems(markdown: string, names: Names): string[] {
  const found: string[] = [];
  const add = (p: string) => {
    if (!found.includes(p)) found.push(p);
  };
  for (const { span, before } of spansWithContext(markdown)) {
    for (const c of commandsIn(span))
      if (unknownCommand(c.tokens, names)) add(`command \`flowport ${c.tokens.join(' ')}\``);
    const tool = /(MCP( tool)?:?|tool)\s*$/.test(before) && /^[a-z]+(_[a-z]+)+$/.test(span);
    if (
      (tool || TOOL_SHAPE.test(span)) &&
      !names.tools.has(span) &&
      !names.fields?.has(span) &&
      !names.errorCodes.has(span)
    )
      add(`MCP tool \`${span}\``);
    else if (
      (OPERATION_SHAPE.test(span) || (/operation(Id)?\s*$/.test(before) && /^[a-z]+[A-Z]\w*$/.test(span))) &&
      !names.operationIds.has(span)
    )
      add(`operationId \`${span}\``);
    else if (SCOPE_SHAPE.test(span) && !names.scopes.has(span)) add(`scope \`${span}\``);
    else if (/^[a-z]+(_[a-z0-9]+)+$/.test(span) && ERROR_CONTEXT.test(before) && !names.errorCodes.has(span))
      add(`error code \`${span}\``);
  }
  for (const m of markdown.matchAll(/\/reference\/errors\/([a-z0-9_]+)\//g))
    if (!names.errorCodes.has(m[1] as string)) add(`error code \`${m[1]}\``);
  for (const code of codeIn(markdown)) {
    if (code.includes('\n')) {
      for (const c of commandsIn(code))
        if (unknownCommand(c.tokens, names)) add(`command \`flowport ${c.tokens.join(' ')}\``);
      for (const m of code.matchAll(/"(?:code|error_code)":\s*"([a-z][a-z0-9_]*)"/g))
        if (!names.errorCodes.has(m[1] as string)) add(`error code \`${m[1]}\``);
    }
    for (const m of code.matchAll(SUPPORT_CODE)) if (!names.supportCodes.has(m[0])) add(`support code \`${m[0]}\``);
  }
  return found;
}

/** Commands printed as bare `flowport …`, which a checkout does not run (it runs `npx flowport …`). */
export function commandProblems(markdown: string): string[] {
  const found: string[] = [];
  for (const code of codeIn(markdown))
    for (const c of commandsIn(code)) if (!c.npx && !found.includes(`\`${c.text}\``)) found.push(`\`${c.text}\``);
  return found;
}

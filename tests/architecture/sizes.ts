// Files a maintainer can read (issue 41, point 5): no file of api/src over MAX_FILE_LINES lines, no
// function over MAX_FUNCTION_LINES (from its first line to its last, inner functions included).
// tests/architecture/sizes.test.ts checks it; `node tests/architecture/sizes.ts` prints what is
// over today. Parsed with the TypeScript parser vitest already runs on (oxc, through vite).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseSync } from 'vite';
import { SRC, sourceFiles } from '../helpers/import-graph.ts';

export const MAX_FILE_LINES = 600;
export const MAX_FUNCTION_LINES = 100;

/**
 * Files and functions still over the limits (`file` or `file: function`, relative to api/src): the
 * work still to do. The list only shrinks: an entry that is within the limits fails the test until
 * it is taken off.
 */
export const KNOWN_OVERSIZE: readonly string[] = [];

type Node = { type: string; start: number; end: number; [key: string]: unknown };

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

function keyName(key: unknown): string | null {
  const k = key as { type?: string; name?: string; value?: unknown } | null;
  if (k?.type === 'Identifier' || k?.type === 'PrivateIdentifier') return k.name ?? null;
  if (k?.type === 'Literal' && typeof k.value === 'string') return k.value;
  return null;
}

/** The name a function goes by where it is written: its own, its variable's, its property's or method's. */
function ownName(fn: Node, parent: Node | null, cls: string | null): string | null {
  const id = keyName(fn.id);
  if (id) return id;
  if (!parent) return null;
  if (parent.type === 'VariableDeclarator') return keyName(parent.id);
  if (parent.type === 'MethodDefinition' || parent.type === 'PropertyDefinition') {
    const name = keyName(parent.key);
    return name && cls ? `${cls}.${name}` : name;
  }
  if (parent.type === 'Property') return keyName(parent.key);
  return null;
}

/** The file (`file`, relative to api/src) and its functions over the limits, with their lengths in lines. */
export function oversizeIn(file: string, text: string): { key: string; lines: number }[] {
  const out: { key: string; lines: number }[] = [];
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const lineOf = (offset: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const fileLines = text.endsWith('\n') ? lineStarts.length - 1 : lineStarts.length;
  if (fileLines > MAX_FILE_LINES) out.push({ key: file, lines: fileLines });
  const visit = (node: Node, parent: Node | null, outer: string | null, cls: string | null): void => {
    let here = outer;
    let inClass = cls;
    if (node.type === 'ClassDeclaration' || node.type === 'ClassExpression') inClass = keyName(node.id);
    if (FUNCTIONS.has(node.type) && node.body) {
      const own = ownName(node, parent, cls);
      here = own && !outer ? own : `${outer ?? '(top level)'} > ${own ?? '(callback)'}`;
      const lines = lineOf(node.end) - lineOf(node.start) + 1;
      if (lines > MAX_FUNCTION_LINES) out.push({ key: `${file}: ${here}`, lines });
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'typeAnnotation' || key === 'returnType') continue;
      for (const child of Array.isArray(value) ? value : [value])
        if (child && typeof child === 'object' && typeof (child as Node).type === 'string')
          visit(child as Node, node, here, inClass);
    }
  };
  const parsed = parseSync(file, text, { lang: file.endsWith('x') ? 'tsx' : 'ts' });
  visit(parsed.program as unknown as Node, null, null, null);
  return out;
}

/** Every file and function of api/src over the limits, with its length in lines. */
export function oversize(): { key: string; lines: number }[] {
  return sourceFiles().flatMap((path) => oversizeIn(relative(SRC, path), readFileSync(path, 'utf8')));
}

if (import.meta.main) for (const o of oversize()) console.log(`${o.lines}\t${o.key}`);

// Reads the import graph of api/src from the source text: every `import`/`export … from`
// and every dynamic `import('…')`, with whether it is type-only (erased at run time) or
// lazy (loaded only when the code runs). Used by tests/architecture/*.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
export const SRC = join(ROOT, 'api', 'src');

export interface ImportEdge {
  /** Importing file, relative to api/src (`intake/intake.ts`). */
  from: string;
  /** Imported file relative to api/src, or the package name (`hono`, `node:fs`). */
  to: string;
  /** True for a package (not a file of api/src). */
  external: boolean;
  /** `import type …` or `import { type A, type B } …`: erased at run time. */
  typeOnly: boolean;
  /** `await import('…')`: loaded only when that code runs. */
  lazy: boolean;
  line: number;
}

export function sourceFiles(dir = SRC): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out.sort();
}

const STATIC = /^[ \t]*(import|export)\s+(type\s+)?(?:([\s\S]*?)\s+from\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function allTypes(clause: string | undefined): boolean {
  const named = clause?.trim().match(/^\{([\s\S]*)\}$/);
  if (!named?.[1]) return false;
  const parts = named[1]
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return parts.length > 0 && parts.every((s) => s.startsWith('type '));
}

/** The edges of one file (path absolute, text optional: tests pass made-up text). */
export function importsOf(file: string, text = readFileSync(file, 'utf8')): ImportEdge[] {
  const from = relative(SRC, file);
  const lineAt = (i: number) => text.slice(0, i).split('\n').length;
  const edge = (spec: string, typeOnly: boolean, lazy: boolean, index: number): ImportEdge => {
    const external = !spec.startsWith('.');
    return {
      from,
      to: external ? spec : relative(SRC, resolve(dirname(file), spec)),
      external,
      typeOnly,
      lazy,
      line: lineAt(index),
    };
  };
  const out: ImportEdge[] = [];
  for (const m of text.matchAll(STATIC))
    out.push(edge(m[4] as string, m[2] !== undefined || allTypes(m[3]), false, m.index ?? 0));
  for (const m of text.matchAll(DYNAMIC)) out.push(edge(m[1] as string, false, true, m.index ?? 0));
  return out;
}

export function importGraph(): ImportEdge[] {
  return sourceFiles().flatMap((f) => importsOf(f));
}

/** The top-level area of a file under api/src: its first folder, or the file's name without `.ts`. */
export function areaOf(path: string): string {
  const i = path.indexOf('/');
  return i === -1 ? path.replace(/\.ts$/, '') : path.slice(0, i);
}

/** Strongly connected groups (size > 1) of a directed graph: each is an import cycle. */
export function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** Every file a module loads when imported (static value imports only), relative to api/src. */
export function staticClosure(entry: string, edges: readonly ImportEdge[] = importGraph()): Set<string> {
  const byFile = new Map<string, ImportEdge[]>();
  for (const e of edges) byFile.set(e.from, [...(byFile.get(e.from) ?? []), e]);
  const seen = new Set<string>([entry]);
  const todo = [entry];
  while (todo.length) {
    const f = todo.pop() as string;
    for (const e of byFile.get(f) ?? []) {
      if (e.typeOnly || e.lazy) continue;
      const key = e.external ? `pkg:${e.to}` : e.to;
      if (seen.has(key)) continue;
      seen.add(key);
      if (!e.external) todo.push(e.to);
    }
  }
  return seen;
}

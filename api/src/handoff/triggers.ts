// The Flow trigger variants, read from the Shopify extension definitions in
// shopify/extensions/<handle>/shopify.extension.toml. The payload builder, the
// sandbox and the docs all read them through loadTriggerDefinitions(): one source.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRIGGER_VARIANTS, type TriggerVariant } from '../store/tables/endpoints.ts';

/** Where the extension definitions live in the repo. */
export const TRIGGER_EXTENSIONS_DIR = fileURLToPath(new URL('../../../shopify/extensions/', import.meta.url));

/** Flow field types we use; references become `<resource>_id` payload keys. */
export const FLOW_FIELD_TYPES = [
  'single_line_text_field',
  'email',
  'url',
  'number_decimal',
  'boolean',
  'order_reference',
  'customer_reference',
  'product_reference',
] as const;
export type FlowFieldType = (typeof FLOW_FIELD_TYPES)[number];

export interface TriggerField {
  type: FlowFieldType;
  /** The key in the Flow payload: the field key, or `order_id` etc. for references. */
  payloadKey: string;
  description: string;
  reference: boolean;
}

export interface TriggerDefinition {
  variant: TriggerVariant;
  handle: string;
  name: string;
  description: string;
  /** Repo-relative path of the definition file. */
  file: string;
  fields: TriggerField[];
}

const HANDLE_RE = /^[A-Za-z0-9-]{1,30}$/;
const CUSTOM_KEY_RE = /^[A-Za-z ]+$/;

/** A trigger's handle is its variant id with hyphens (`external_order_event` → `external-order-event`). */
export function handleForVariant(variant: TriggerVariant): string {
  return variant.replace(/_/g, '-');
}

let cache: TriggerDefinition[] | null = null;

/** Extension types of the app besides Flow triggers, skipped when reading trigger definitions. */
export const APP_EXTENSION_TYPES: readonly string[] = ['flow_trigger_lifecycle_callback'];

/** All trigger definitions, validated, in TRIGGER_VARIANTS order. Cached after the first read. */
export function loadTriggerDefinitions(dir: string = TRIGGER_EXTENSIONS_DIR): TriggerDefinition[] {
  if (cache && dir === TRIGGER_EXTENSIONS_DIR) return cache;
  const byHandle = new Map<string, TriggerDefinition>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const file = join(dir, entry.name, 'shopify.extension.toml');
    const text = readFileSync(file, 'utf8');
    // Other extensions of the app (the Flow trigger lifecycle callback) are not triggers.
    const type = (parseToml(text, file).extensions as Record<string, unknown>[] | undefined)?.[0]?.type;
    if (type !== 'flow_trigger' && typeof type === 'string' && APP_EXTENSION_TYPES.includes(type)) continue;
    const def = parseDefinition(text, `shopify/extensions/${entry.name}/shopify.extension.toml`);
    byHandle.set(def.handle, def);
  }
  const out = TRIGGER_VARIANTS.map((variant) => {
    const def = byHandle.get(handleForVariant(variant));
    if (!def)
      throw new Error(
        `No Flow trigger definition for variant ${variant} (expected handle ${handleForVariant(variant)})`,
      );
    return def;
  });
  if (dir === TRIGGER_EXTENSIONS_DIR) cache = out;
  return out;
}

export function triggerDefinition(variant: TriggerVariant): TriggerDefinition {
  const def = loadTriggerDefinitions().find((d) => d.variant === variant);
  if (!def) throw new Error(`Unknown trigger variant ${variant}`);
  return def;
}

function parseDefinition(text: string, file: string): TriggerDefinition {
  const doc = parseToml(text, file);
  const ext = (doc.extensions as Record<string, unknown>[] | undefined)?.[0];
  if (!ext) throw new Error(`${file}: no [[extensions]] entry`);
  if (ext.type !== 'flow_trigger') throw new Error(`${file}: type must be "flow_trigger"`);
  const handle = String(ext.handle ?? '');
  if (!HANDLE_RE.test(handle)) throw new Error(`${file}: handle must be ≤ 30 letters, digits or hyphens`);
  const variant = handle.replace(/-/g, '_') as TriggerVariant;
  if (!(TRIGGER_VARIANTS as readonly string[]).includes(variant))
    throw new Error(`${file}: handle ${handle} matches no trigger variant`);
  const settings = (doc.settings ?? {}) as { fields?: Record<string, unknown>[] };
  const fields = (settings.fields ?? []).map((f, i): TriggerField => {
    const type = String(f.type ?? '') as FlowFieldType;
    if (!(FLOW_FIELD_TYPES as readonly string[]).includes(type))
      throw new Error(`${file}: field ${i}: unsupported type ${type}`);
    const reference = type.endsWith('_reference');
    const key = reference ? `${type.replace(/_reference$/, '')}_id` : String(f.key ?? '');
    if (!reference && !CUSTOM_KEY_RE.test(key)) throw new Error(`${file}: field ${i}: key must be letters and spaces`);
    return { type, payloadKey: key, description: String(f.description ?? ''), reference };
  });
  return {
    variant,
    handle,
    name: String(ext.name ?? handle),
    description: String(ext.description ?? ''),
    file,
    fields,
  };
}

type TomlTable = Record<string, unknown>;

/**
 * A reader for the TOML subset the extension files use: comments, [table],
 * [[array.of.tables]], and `key = value` with basic strings, integers, floats
 * and booleans. Anything else is an error, not a silent guess.
 */
export function parseToml(text: string, file = 'toml'): TomlTable {
  const root: TomlTable = {};
  let current: TomlTable = root;
  const lines = text.split(/\r?\n/);
  lines.forEach((rawLine, idx) => {
    const line = stripComment(rawLine).trim();
    if (line === '') return;
    const where = `${file}:${idx + 1}`;
    const arr = /^\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]$/.exec(line);
    const tbl = /^\[\s*([A-Za-z0-9_.-]+)\s*\]$/.exec(line);
    if (arr?.[1]) {
      const path = arr[1].split('.');
      const parent = walk(root, path.slice(0, -1), where);
      const last = path[path.length - 1] as string;
      if (parent[last] === undefined) parent[last] = [];
      const list = parent[last];
      if (!Array.isArray(list)) throw new Error(`${where}: ${arr[1]} is not an array of tables`);
      current = {};
      list.push(current);
      return;
    }
    if (tbl?.[1]) {
      current = walk(root, tbl[1].split('.'), where);
      return;
    }
    const kv = /^([A-Za-z0-9_-]+|"[^"]*")\s*=\s*(.+)$/.exec(line);
    if (!kv?.[1] || kv[2] === undefined) throw new Error(`${where}: cannot read "${line}"`);
    const key = kv[1].startsWith('"') ? kv[1].slice(1, -1) : kv[1];
    current[key] = parseValue(kv[2].trim(), where);
  });
  return root;
}

function walk(root: TomlTable, path: string[], where: string): TomlTable {
  let t = root;
  for (const part of path) {
    let next = t[part];
    if (Array.isArray(next)) next = next[next.length - 1];
    if (next === undefined) {
      next = {};
      t[part] = next;
    }
    if (typeof next !== 'object' || next === null) throw new Error(`${where}: ${part} is not a table`);
    t = next as TomlTable;
  }
  return t;
}

function stripComment(line: string): string {
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '\\' && inString) i++;
    else if (ch === '"') inString = !inString;
    else if (ch === '#' && !inString) return line.slice(0, i);
  }
  return line;
}

function parseValue(raw: string, where: string): unknown {
  if (raw.startsWith('"')) {
    if (!raw.endsWith('"') || raw.length < 2) throw new Error(`${where}: unterminated string`);
    return JSON.parse(raw) as string;
  }
  if (raw.startsWith('[')) {
    // A one-line array of strings (shopify.app.toml's scopes, redirect URLs and topics).
    if (!raw.endsWith(']')) throw new Error(`${where}: arrays must be on one line`);
    const inner = raw.slice(1, -1).trim();
    if (inner === '') return [];
    const items = inner.replace(/,\s*$/, '').split(/\s*,\s*/);
    return items.map((item) => {
      const v = parseValue(item, where);
      if (typeof v !== 'string') throw new Error(`${where}: unsupported value ${raw} (arrays hold strings only)`);
      return v;
    });
  }
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (/^[+-]?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  throw new Error(`${where}: unsupported value ${raw}`);
}

// Text no store can hold, or that makes no sense in an id, filter or name. PostgreSQL refuses a
// NUL (U+0000) in any `text` value or bind parameter (SQLite stores it), so a NUL that reached
// the store would answer 500 on one store and 2xx on the other. Every operation's input is
// checked here before authentication and before the store (operations/pipeline.ts), every route's
// path, query string, form fields and JSON body before any route runs (http/input-guard.ts), and
// intake checks the fields it extracts from a body (intake/mapping.ts): one rule, both stores, a
// 400 `invalid_characters` naming the fields.
import { AppError, type FieldError } from '../errors/problem.ts';

/** U+0000 anywhere: refused at every depth (a sender's JSON payload included). */
export function hasNul(value: string): boolean {
  return value.includes('\u0000');
}
/** C0 controls other than tab, line feed and carriage return, and DEL: refused in ids, filters and names. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

export function hasControlCharacters(value: string): boolean {
  return CONTROL.test(value);
}

const describe = (v: string) => (hasNul(v) ? 'Contains a NUL (U+0000).' : 'Contains a control character.');

/**
 * Top-level input fields that carry a sender's JSON body as is (a test event's `payload`): inside
 * them only the NUL is refused, since a body may carry any other escaped character.
 */
export const FREE_JSON_FIELDS: ReadonlySet<string> = new Set(['payload']);

/**
 * `nulOnly`: refuse only the NUL, at every depth (a JSON body whose fields the guard does not know:
 * http/input-guard.ts); otherwise the rule below.
 */
export interface CharacterRule {
  nulOnly?: boolean;
}

/**
 * The fields of an operation's input (and its declared headers) that hold text no store should
 * see: a NUL anywhere (keys too); another control character (tab, line feed and carriage return
 * aside) anywhere but inside a FREE_JSON_FIELDS body: ids, filters, names, mapping paths.
 */
export function controlCharacterErrors(
  input: Record<string, unknown>,
  headers: Record<string, unknown> = {},
  options: CharacterRule = {},
): FieldError[] {
  const errors: FieldError[] = [];
  const walk = (v: unknown, path: string, strict: boolean, depth: number) => {
    if (errors.length >= 20 || depth > 32) return;
    if (typeof v === 'string') {
      if (strict ? hasControlCharacters(v) : hasNul(v)) errors.push({ path, message: describe(v) });
      return;
    }
    if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) walk(item, `${path}.${i}`, strict, depth + 1);
      return;
    }
    if (v && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        const p = path ? `${path}.${k}` : k;
        if (strict ? hasControlCharacters(k) : hasNul(k))
          errors.push({ path: p, message: 'The key contains a control character.' });
        walk(item, p, strict && !(depth === 0 && FREE_JSON_FIELDS.has(k)), depth + 1);
      }
    }
  };
  walk(input, '', !options.nulOnly, 0);
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string' && hasControlCharacters(value)) errors.push({ path: name, message: describe(value) });
  }
  return errors;
}

/** Throws 400 invalid_characters when controlCharacterErrors finds any. */
export function refuseControlCharacters(
  input: Record<string, unknown>,
  headers: Record<string, unknown> = {},
  options: CharacterRule = {},
): void {
  const errors = controlCharacterErrors(input, headers, options);
  if (errors.length === 0) return;
  throw new AppError('invalid_characters', {
    detail: `These fields hold a NUL or another control character, which no id, filter or name may contain: ${errors.map((e) => e.path).join(', ')}.`,
    errors,
  });
}

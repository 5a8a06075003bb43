// Closed input: a body field or query parameter an operation does not define is refused
// (`unknown_field`, naming it and the name it probably meant), never ignored. The HTTP
// routes and the MCP tools run this before validation, so both answer the same problem.
import type { z } from '@hono/zod-openapi';
import { AppError } from '../errors/problem.ts';
import { closestName, unknownNameMessage } from '../lib/suggest.ts';

export type InputLocation = 'body' | 'query' | 'arguments';

export interface UnknownField {
  location: InputLocation;
  /** Dotted path of the unknown field (`mapping.resource_id_pth`). */
  path: string;
  /** Dotted path of the defined field it probably meant, or null. */
  did_you_mean: string | null;
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
  getter?: () => z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The fields of `value` the schema does not define, at any depth (objects, arrays, records, unions). */
export function unknownFields(
  schema: z.ZodType,
  value: unknown,
  location: InputLocation,
  path: readonly string[] = [],
): UnknownField[] {
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return def.innerType ? unknownFields(def.innerType, value, location, path) : [];
    case 'pipe':
      return def.in ? unknownFields(def.in, value, location, path) : [];
    case 'lazy':
      return def.getter ? unknownFields(def.getter(), value, location, path) : [];
    case 'array':
      if (!Array.isArray(value) || !def.element) return [];
      return value.flatMap((item, i) => unknownFields(def.element as z.ZodType, item, location, [...path, String(i)]));
    case 'record':
      if (!isPlainObject(value) || !def.valueType) return [];
      return Object.entries(value).flatMap(([k, v]) =>
        unknownFields(def.valueType as z.ZodType, v, location, [...path, k]),
      );
    case 'union': {
      if (!isPlainObject(value)) return [];
      let best: UnknownField[] | null = null;
      for (const option of def.options ?? []) {
        if (defOf(option).type !== 'object') continue;
        const found = unknownFields(option, value, location, path);
        // A discriminated variant whose literal fields match wins outright.
        if (found.length === 0) return [];
        if (!best || found.length < best.length) best = found;
      }
      return best ?? [];
    }
    case 'object': {
      if (!isPlainObject(value)) return [];
      const shape = def.shape ?? {};
      // An object declared open (`catchall`, e.g. a free-form payload) takes any field.
      if (def.catchall && defOf(def.catchall).type !== 'never') return [];
      const known = Object.keys(shape);
      const out: UnknownField[] = [];
      for (const [k, v] of Object.entries(value)) {
        // Own fields only: a key such as `__proto__` or `constructor` is data, never the shape's prototype.
        const field = Object.hasOwn(shape, k) ? shape[k] : undefined;
        if (field) out.push(...unknownFields(field, v, location, [...path, k]));
        else {
          const near = closestName(k, known);
          out.push({ location, path: [...path, k].join('.'), did_you_mean: near ? [...path, near].join('.') : null });
        }
      }
      return out;
    }
    default:
      return [];
  }
}

/** Throws `unknown_field` for the fields found, or returns. */
export function refuseUnknownFields(found: readonly UnknownField[]): void {
  if (found.length === 0) return;
  const where = (f: UnknownField) =>
    f.location === 'query' ? 'query parameter' : f.location === 'body' ? 'body field' : 'argument';
  const sentence = (f: UnknownField) =>
    unknownNameMessage(where(f), `\`${f.path}\``, f.did_you_mean ? `\`${f.did_you_mean}\`` : null);
  throw new AppError('unknown_field', {
    detail: `${found.map(sentence).join(' ')} Unknown fields are refused, never ignored.`,
    errors: found.map((f) => ({ path: f.path, message: sentence(f) })),
    extra: {
      unknown_fields: found.map((f) => ({ location: f.location, path: f.path, did_you_mean: f.did_you_mean })),
    },
  });
}

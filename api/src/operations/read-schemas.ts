// Schemas shared by the read operations (grants/reads area): actor, paging, ids.
// (Timestamps as text and the sealed cursors are in ../reads/shared.ts.)
import { z } from '@hono/zod-openapi';

export const Timestamp = z.string().openapi({ format: 'date-time', example: '2026-11-22T05:47:15.000Z' });

/** A described string that may be null (the contract's most common field). */
export const nullableText = (description: string) => z.string().nullable().describe(description);

/** A described whole number. */
export const wholeNumber = (description: string) => z.number().int().describe(description);

export const Actor = z
  .object({
    grant_id: z.string().nullable().describe('The grant that acted (null for operator or system actions).'),
    kind: z.string().describe('`agent` or `human` for grants; `operator` (CLI on the host) or `system` otherwise.'),
    name: z
      .string()
      .describe(
        "Display name of the actor: the grant's actor name for grants, otherwise who ran the operator or system action.",
      ),
  })
  .openapi('Actor');

/** One grant scope and what it allows (the grant read and the manifest list them alike). */
export const ScopeFacts = z.object({
  scope: z.string().describe('Scope name (e.g. `events:read`).'),
  description: z.string().describe('What the scope allows.'),
});

export const PageInfo = z
  .object({
    next_cursor: z
      .string()
      .nullable()
      .describe('Pass as `cursor` to get the next page; null when this is the last page.'),
    has_more: z.boolean().describe('True when more items follow this page.'),
    limit: z.number().int().describe('Page size used for this page.'),
  })
  .openapi('PageInfo');

export const Limit = z.coerce
  .number()
  .int()
  .min(1)
  .max(200)
  .default(50)
  .openapi({ param: { name: 'limit', in: 'query' }, description: 'Page size, 1–200 (default 50).', example: 50 });

export const Cursor = z
  .string()
  .max(200)
  .optional()
  .openapi({
    param: { name: 'cursor', in: 'query' },
    description: 'Opaque cursor from `page.next_cursor` of the previous page.',
  });

/** A query parameter's OpenAPI metadata: its name (as the key it documents) and what it filters. */
export const queryParam = (name: string, description: string) => ({
  param: { name, in: 'query' as const },
  description,
});

/** The `params` of a path naming one object by id (`evt_…`, `ep_…`): 1–64 characters. */
export function idPathParam<N extends string>(name: N, example: string, description: string) {
  const id = z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name, in: 'path' }, example, description });
  return z.object({ [name]: id } as Record<N, typeof id>);
}

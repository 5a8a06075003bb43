// Schemas shared by the read operations (grants/reads area): actor, paging, ids.
import { z } from '@hono/zod-openapi';
import type { SecretBox } from '../lib/crypto.ts';

export const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
export const isoReq = (ms: number): string => new Date(Number(ms)).toISOString();

export const Timestamp = z.string().openapi({ format: 'date-time', example: '2026-11-22T05:47:15.000Z' });

export const Actor = z
  .object({
    grant_id: z.string().nullable().describe('The grant that acted (null for operator or system actions).'),
    kind: z.string().describe('`agent` or `human` for grants; `operator` (CLI on the host) or `system` otherwise.'),
    name: z.string(),
  })
  .openapi('Actor');

export const PageInfo = z
  .object({
    next_cursor: z
      .string()
      .nullable()
      .describe('Pass as `cursor` to get the next page; null when this is the last page.'),
    has_more: z.boolean(),
    limit: z.number().int(),
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

const SEALED = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{1,200}$/;

/**
 * A keyset cursor over a position (a time-sortable id or a sequence number), sealed with the server key (AES-256-GCM):
 * opaque, and any edit or forgery fails to open. `scope` binds it to what it pages
 * (e.g. shop and order), so another shop's or another order's cursor is refused.
 */
export function sealCursor(secrets: SecretBox, scope: string, id: string): string {
  return secrets.encrypt(`c1|${scope}|${id}`);
}

/** The position inside a cursor this server sealed for `scope`, or null for anything else. */
export function openCursor(secrets: SecretBox, scope: string, cursor: string): string | null {
  // Only the exact sealed shape (a full 16-byte tag) reaches decryption.
  if (!SEALED.test(cursor)) return null;
  // Canonical base64url only: unused low bits of a last character would otherwise give one cursor many spellings.
  if (cursor.split('.').some((part, i) => i > 0 && Buffer.from(part, 'base64url').toString('base64url') !== part))
    return null;
  let text: string;
  try {
    text = secrets.decrypt(cursor);
  } catch {
    return null;
  }
  // The position: a time-sortable id (events) or a sequence number (audit); callers check its form.
  const m = /^c1\|(.+)\|([0-9a-z_]{1,64})$/.exec(text);
  return m && m[1] === scope ? (m[2] ?? null) : null;
}

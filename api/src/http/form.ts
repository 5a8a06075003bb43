// An HTML form post's fields (urlencoded or multipart), for the OAuth endpoints and the merchant
// pages; any other body type reads as no fields.
import type { Context } from 'hono';
import type { AppEnv } from './types.ts';

export async function formOf(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const type = c.req.header('content-type') ?? '';
  if (!/application\/x-www-form-urlencoded|multipart\/form-data/i.test(type)) return {};
  return (await c.req.parseBody()) as Record<string, unknown>;
}

/** A field's value when it is text (a file or a missing field: undefined). */
export const formText = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

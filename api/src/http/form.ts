// An HTML form post's fields (urlencoded or multipart), for the OAuth endpoints and the merchant
// pages; any other body type reads as no fields. A body that does not parse as its type says (a
// broken multipart part, no boundary, a body cut short) is the client's mistake: 400
// `invalid_request`, never a 500 (the input guard reads form bodies with the same parse first).
import type { Context } from 'hono';
import { AppError } from '../errors/problem.ts';
import type { AppEnv } from './types.ts';

const FORM_TYPE = /application\/x-www-form-urlencoded|multipart\/form-data/i;

function unreadable(type: string): AppError {
  const detail = /multipart/i.test(type)
    ? 'The multipart/form-data body could not be read: it needs a boundary parameter in Content-Type and well-formed parts.'
    : 'The form body could not be read as application/x-www-form-urlencoded.';
  return new AppError('invalid_request', { detail, errors: [{ path: 'body', message: detail }] });
}

/** A form body's FormData, or 400 `invalid_request` when it does not parse. */
export async function parseFormData(body: ArrayBuffer, type: string): Promise<FormData> {
  try {
    return await new Response(body, { headers: { 'content-type': type } }).formData();
  } catch {
    throw unreadable(type);
  }
}

export async function formOf(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const type = c.req.header('content-type') ?? '';
  if (!FORM_TYPE.test(type)) return {};
  try {
    return (await c.req.parseBody()) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw unreadable(type);
  }
}

/** A field's value when it is text (a file or a missing field: undefined). */
export const formText = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

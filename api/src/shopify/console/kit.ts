// What every console page uses: calling an operation of the registry as the merchant (the same
// pipeline, scopes, metering, audit and refusals as an agent's call), the link to that
// operation's API reference, dates in words, and the page frame.
import type { Context } from 'hono';
import type { Services } from '../../core/types.ts';
import { DOCS_PATHS, errorDocsPath, joinUrl, operationPagePath } from '../../docs-paths.ts';
import { ERROR_CATALOG } from '../../errors/catalog.ts';
import { AppError } from '../../errors/problem.ts';
import type { AppEnv } from '../../http/types.ts';
import { invokeOperation } from '../../operations/pipeline.ts';
import { OPERATIONS } from '../../operations/registry.ts';
import { type Html, html } from '../merchant/html.ts';

export { when } from '../merchant/html.ts';
import type { ConsoleCaller } from './auth.ts';
import { CONSOLE_PATH } from './shell.ts';

export interface PageCtx {
  c: Context<AppEnv>;
  services: Services;
  caller: ConsoleCaller;
}

/** A POST's answer: where the script goes next, the message to show, a secret shown once. */
export interface PostAnswer {
  location: string;
  message: string;
  tone?: 'success' | 'warning' | 'critical';
  shown_once?: { label: string; value: string };
}

export const consoleUrl = (path: string) => `${CONSOLE_PATH}${path}`;

function issuesText(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues.map((i) => `${i.path.map(String).join('.') || 'input'}: ${i.message}`).join('; ');
}

/** Calls operation `operationId` as the merchant; its input validated by the operation's own schemas. */
export async function callOp<T = Record<string, unknown>>(
  ctx: PageCtx,
  operationId: string,
  input: { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: Record<string, unknown> },
  headers: Record<string, string> = {},
): Promise<T> {
  const op = OPERATIONS.find((o) => o.operationId === operationId);
  if (!op) throw new AppError('internal_error', { detail: `No operation ${operationId}.` });
  const parsed: Record<string, unknown> = {};
  for (const part of ['params', 'query', 'body'] as const) {
    const schema = op.request[part] as
      | { safeParse(v: unknown): { success: boolean; data?: unknown; error?: unknown } }
      | undefined;
    if (!schema) continue;
    const r = schema.safeParse(input[part] ?? {});
    if (!r.success)
      throw new AppError('invalid_request', {
        detail: issuesText(r.error as { issues: { path: PropertyKey[]; message: string }[] }),
      });
    Object.assign(parsed, r.data as Record<string, unknown>);
  }
  return (await invokeOperation(op, {
    services: ctx.services,
    requestId: ctx.c.get('requestId'),
    transport: 'http',
    token: null,
    principal: ctx.caller.principal,
    headers,
    input: parsed,
  })) as T;
}

/** "How to do this over the API": a link to the operations' reference pages. */
export function apiLinks(ctx: PageCtx, ...operationIds: string[]): Html {
  const links = operationIds.map(
    (id, i) =>
      html`${i ? ', ' : ''}<a href="${joinUrl(ctx.services.config.publicUrl, operationPagePath(id))}" target="_top"><code>${id}</code></a>`,
  );
  return html`<p class="muted">Over the API: ${links}.</p>`;
}

/** A page: its heading, the API operations it uses, its sections. */
export function consolePage(ctx: PageCtx, title: string, ops: string[], body: Html | Html[]): Html {
  return html`<s-page heading="${title}"><h1>${title}</h1>${body}${apiLinks(ctx, ...ops)}</s-page>`;
}

export function section(heading: string, body: Html | Html[] | string): Html {
  return html`<s-section heading="${heading}"><h2>${heading}</h2>${body}</s-section>`;
}

/** A refusal, in the console: its code, what happened, what to do, its docs page. */
export function errorFragment(publicUrl: string, err: AppError): Html {
  const def = ERROR_CATALOG[err.code];
  return html`<s-page heading="${def.title}"><h1>${def.title}</h1><s-banner tone="critical"><p>${err.message}</p><p>Error code: <code>${err.code}</code></p></s-banner>
<h2>What to do</h2><p>${def.fix}</p><p><a href="${joinUrl(publicUrl, errorDocsPath(err.code))}" target="_top">Read about <code>${err.code}</code></a> · <a href="${consoleUrl('')}">Overview</a></p></s-page>`;
}

/** The console's own 404. */
export function notFoundFragment(publicUrl: string): Html {
  return html`<s-page heading="Page not found"><h1>Page not found</h1><p>The console has no page at this address.</p>
<p><a href="${consoleUrl('')}">Overview</a> · <a href="${consoleUrl('/events')}">Events</a> · <a href="${joinUrl(publicUrl, DOCS_PATHS.merchantPage)}" target="_top">About the merchant area</a></p></s-page>`;
}

/** A text field of a posted form, trimmed ('' when absent). */
export function field(form: Record<string, unknown>, name: string): string {
  const v = form[name];
  return typeof v === 'string' ? v.trim() : '';
}

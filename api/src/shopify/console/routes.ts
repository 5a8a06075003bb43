// The embedded console's routes (ADR 1450). A GET without a session token is the shell document
// (shell.ts); with one (`Authorization: Bearer`), the page's HTML. A POST carries a session token
// too and answers JSON: where to go next and the message to show, never a page, so a reload
// repeats only a GET, and a form sent twice runs once (form-key.ts). Every request is
// authenticated by consoleCaller (auth.ts).
import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Services } from '../../core/types.ts';
import { AppError } from '../../errors/problem.ts';
import { ERROR_CATALOG } from '../../errors/catalog.ts';
import { formOf } from '../../http/form.ts';
import type { AppEnv } from '../../http/types.ts';
import type { Html } from '../merchant/html.ts';
import { bearerSessionToken } from '../session-token.ts';
import { consoleCaller } from './auth.ts';
import { oncePerForm } from './form-key.ts';
import {
  eventPage,
  eventsPage,
  intentPage,
  postBulk,
  postCancel,
  postConfirm,
  postReplay,
  recoverPage,
} from './events-pages.ts';
import { errorFragment, notFoundFragment, type PageCtx, type PostAnswer } from './kit.ts';
import {
  activityPage,
  alertsPage,
  endpointPage,
  endpointsPage,
  grantsPage,
  overviewPage,
  postAlert,
  postAlertRemove,
  postEndpointCreate,
  postEndpointEdit,
  postGrant,
  postRevoke,
  postRotate,
  refusedPage,
  revokeConfirmPage,
} from './setup-pages.ts';
import { CONSOLE_PATH, CONSOLE_SCRIPT, CONSOLE_SCRIPT_PATH, consoleHeaders, consoleShell } from './shell.ts';

type Params = Record<string, string>;
const GETS: [string, (ctx: PageCtx, p: Params) => Promise<Html> | Html][] = [
  ['', overviewPage],
  ['/events', eventsPage],
  ['/events/:id', (ctx, p) => eventPage(ctx, p.id ?? '')],
  ['/recover', recoverPage],
  ['/intents/:id', (ctx, p) => intentPage(ctx, p.id ?? '')],
  ['/refused', refusedPage],
  ['/endpoints', endpointsPage],
  ['/endpoints/:id', (ctx, p) => endpointPage(ctx, p.id ?? '')],
  ['/grants', grantsPage],
  ['/grants/:id/revoke', (ctx, p) => revokeConfirmPage(ctx, p.id ?? '')],
  ['/alerts', alertsPage],
  ['/activity', activityPage],
];

type Form = Record<string, unknown>;
const POSTS: [string, (ctx: PageCtx, p: Params, form: Form) => Promise<PostAnswer>][] = [
  ['/events/:id/replay', (ctx, p, f) => postReplay(ctx, p.id ?? '', f)],
  ['/recover/bulk', (ctx, _p, f) => postBulk(ctx, f)],
  ['/intents/:id/confirm', (ctx, p, f) => postConfirm(ctx, p.id ?? '', f)],
  ['/intents/:id/cancel', (ctx, p) => postCancel(ctx, p.id ?? '')],
  ['/endpoints', (ctx, _p, f) => postEndpointCreate(ctx, f)],
  ['/endpoints/:id/edit', (ctx, p, f) => postEndpointEdit(ctx, p.id ?? '', f)],
  ['/endpoints/:id/rotate', (ctx, p, f) => postRotate(ctx, p.id ?? '', f)],
  ['/grants', (ctx, _p, f) => postGrant(ctx, f)],
  ['/grants/:id/revoke', (ctx, p) => postRevoke(ctx, p.id ?? '')],
  ['/alerts', (ctx, _p, f) => postAlert(ctx, f)],
  ['/alerts/:id/remove', (ctx, p) => postAlertRemove(ctx, p.id ?? '')],
];

function refusal(c: Context<AppEnv>, services: Services, err: unknown): Response {
  const e = err instanceof AppError ? err : new AppError('internal_error');
  if (!(err instanceof AppError)) services.log?.error({ err: String(err) }, 'console request failed');
  return c.html(errorFragment(services.config.publicUrl, e).value, ERROR_CATALOG[e.code].status as 400);
}

async function withCaller(
  c: Context<AppEnv>,
  services: Services,
  fn: (ctx: PageCtx) => Promise<Response>,
): Promise<Response> {
  consoleHeaders(c, services);
  try {
    const caller = await consoleCaller(c, services);
    return await fn({ c, services, caller });
  } catch (err) {
    return refusal(c, services, err);
  }
}

export function consoleRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(CONSOLE_SCRIPT_PATH, (c) => {
    c.header('Cache-Control', 'no-cache');
    return c.body(CONSOLE_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8' });
  });
  for (const [path, page] of GETS)
    app.get(`${CONSOLE_PATH}${path}`, async (c) => {
      const services = getServices();
      if (!bearerSessionToken(c)) return consoleShell(c, services);
      return withCaller(c, services, async (ctx) => c.html((await page(ctx, c.req.param() as Params)).value));
    });
  for (const [path, post] of POSTS)
    app.post(`${CONSOLE_PATH}${path}`, async (c) => {
      const services = getServices();
      return withCaller(c, services, async (ctx) => {
        const form = await formOf(c);
        return c.json(await oncePerForm(ctx, path, form, () => post(ctx, c.req.param() as Params, form)));
      });
    });
  // The console's own 404, for a document (the shell) and for its script's request.
  app.get(`${CONSOLE_PATH}/*`, async (c) => {
    const services = getServices();
    if (!bearerSessionToken(c)) return consoleShell(c, services);
    return withCaller(c, services, async () => c.html(notFoundFragment(services.config.publicUrl).value, 404));
  });
  return app;
}

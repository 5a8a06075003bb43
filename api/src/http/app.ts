// The one Hono app: sender intake, the Agent Operations API, health, the
// sandbox Shopify stand-in (sandbox mode) and the built docs site.
import type { OpenAPIHono } from '@hono/zod-openapi';
import { type Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { newId } from '../ids.ts';
import { idsInPath, outcomeOf } from '../observability/log.ts';
import { AppError } from '../errors/problem.ts';
import { isStoreFull, probeWrite, storeFullError } from '../store/full.ts';
import { AGENT_API_PREFIX } from '../lib/package-info.ts';
import type { AnyOperation, Services } from '../core/types.ts';
import { buildAgentRouter } from './agent-router.ts';
import { inputGuard } from './input-guard.ts';
import { canonicalOrigin } from './canonical-origin.ts';
import { problemResponse } from './problem-response.ts';
import { mountStaticSite } from './static-site.ts';
import type { AppEnv } from './types.ts';
import { storeReady } from '../store/db.ts';

export interface AppParts {
  services: Services;
  operations: readonly AnyOperation[];
  /** Extra sub-apps mounted before the site (intake, sandbox, MCP …), keyed by path prefix. */
  mounts?: { path: string; app: Hono<AppEnv> | OpenAPIHono<AppEnv> }[];
  /** Readiness probes beyond the store (e.g. the site is built). */
  readiness?: () => Promise<Record<string, boolean>>;
}

/**
 * The route label of a request for metrics and logs: Hono's matched pattern (ids stay
 * `:param`), `static` for the docs site and anything unmatched. Bounded by the routes defined.
 */
function routeLabel(routePath: string, path: string): string {
  if (!routePath || routePath === '*' || routePath === '/*')
    return path.startsWith(AGENT_API_PREFIX) ? 'agent_unmatched' : 'static';
  return routePath;
}

function pathPattern(path: string): RegExp {
  return new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
}

export function createApp(parts: AppParts): Hono<AppEnv> {
  const { services, operations } = parts;
  const publicUrl = services.config.publicUrl;
  const app = new Hono<AppEnv>();

  app.use('*', async function requestId(c, next) {
    const id = newId('request');
    const started = performance.now();
    c.set('requestId', id);
    await next();
    c.header('X-Request-Id', id);
    const seconds = (performance.now() - started) / 1000;
    const route = routeLabel(c.req.routePath, c.req.path);
    const status = c.res.status;
    services.metrics?.httpCell(route, c.req.method, status).observe(seconds);
    const log = services.log;
    if (log?.isLevelEnabled('info')) {
      const principal = c.get('principal');
      log.info(
        {
          kind: 'request',
          request_id: id,
          method: c.req.method,
          route,
          status,
          outcome: outcomeOf(status),
          ...(c.get('errorCode') ? { error_code: c.get('errorCode') } : {}),
          ...idsInPath(c.req.path),
          ...(principal ? { shop_id: principal.shopId } : {}),
          duration_ms: Math.round(seconds * 1e6) / 1e3,
        },
        'request',
      );
    }
  });

  // Before any route (mounts included): the body limit and input guard of every route (ADR 1102).
  app.use('*', inputGuard(services.config));
  // The install and OAuth pages only on the public URL's host (their cookies come back there).
  app.use('*', canonicalOrigin(services.config));

  app.onError((err, c) => answerError(err, c, services, publicUrl));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const checks: Record<string, boolean> = {};
    try {
      checks.store = await storeReady(services.db);
    } catch {
      checks.store = false;
    }
    // After a write failed for a full disk, not ready until a write succeeds again: this probe
    // writes one row, so readiness comes back by itself once space is freed.
    if (services.db.writeBlocked?.())
      await probeWrite(services.db, services.now())
        .then(() => services.db.writeRecovered?.())
        .catch(() => {});
    checks.store_writable = !services.db.writeBlocked?.();
    Object.assign(checks, (await parts.readiness?.()) ?? {});
    const ready = Object.values(checks).every(Boolean);
    if (!ready) {
      return problemResponse(
        c,
        new AppError('service_unavailable', { detail: 'Not ready.', extra: { checks } }),
        publicUrl,
      );
    }
    return c.json({ status: 'ready', checks });
  });

  for (const m of parts.mounts ?? []) app.route(m.path, m.app);

  const agent = buildAgentRouter(() => services, operations);
  app.route('/', agent);

  // Anything else under /agent/v1 is an API miss: problem+json, never the HTML 404 page.
  const patterns = operations.map((op) => ({ re: pathPattern(op.path), method: op.method.toUpperCase() }));
  app.all(`${AGENT_API_PREFIX}/*`, (c) => {
    const matches = patterns.filter((p) => p.re.test(c.req.path));
    if (matches.length > 0) {
      const allow = [...new Set(matches.map((m) => m.method))];
      throw new AppError('method_not_allowed', {
        detail: `${c.req.method} is not allowed on ${c.req.path}. Allowed: ${allow.join(', ')}.`,
        allow,
      });
    }
    throw new AppError('route_not_found', { detail: `No operation at ${c.req.method} ${c.req.path}.` });
  });
  app.all(AGENT_API_PREFIX, () => {
    throw new AppError('route_not_found', { detail: 'Start at GET /agent/v1/manifest.' });
  });

  mountStaticSite(app, services.config.siteDir, publicUrl);
  return app;
}

/** The problem+json answer to an error a route threw; anything not an AppError is logged, never shown. */
function answerError(err: Error, c: Context<AppEnv>, services: Services, publicUrl: string): Response {
  if (err instanceof AppError) c.set('errorCode', err.code);
  if (err instanceof AppError) return problemResponse(c, err, publicUrl);
  if (isStoreFull(err)) return problemResponse(c, storeFullError(), publicUrl);
  if (err instanceof HTTPException) {
    if (err.status === 400 && /json/i.test(err.message)) {
      return problemResponse(
        c,
        new AppError('invalid_json', { detail: 'The request body is not valid JSON.' }),
        publicUrl,
      );
    }
    if (err.status === 413) return problemResponse(c, new AppError('payload_too_large'), publicUrl);
    if (err.status === 415) {
      return problemResponse(
        c,
        new AppError('unsupported_media_type', {
          detail: `This operation takes a JSON body: send it with \`Content-Type: application/json\` (got ${c.req.header('content-type') ? `\`${c.req.header('content-type')}\`` : 'no Content-Type'}).`,
        }),
        publicUrl,
      );
    }
    return problemResponse(c, new AppError('invalid_request', { detail: err.message }), publicUrl);
  }
  c.set('errorCode', 'internal_error');
  services.log?.error(
    {
      kind: 'unhandled_error',
      request_id: c.get('requestId'),
      stack: err instanceof Error ? err.stack : String(err),
    },
    'unhandled error',
  );
  return problemResponse(c, new AppError('internal_error'), publicUrl);
}

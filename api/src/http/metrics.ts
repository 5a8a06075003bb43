// GET /metrics: this process's Prometheus text (api/src/observability/metrics.ts). Served to
// loopback requests made directly on this machine (api/src/http/loopback-guard.ts), or to any
// request carrying the metrics token from configuration as a bearer token.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Hono } from 'hono';
import { AppError } from '../errors/problem.ts';
import { isLoopbackRequest } from './loopback-guard.ts';
import type { AppEnv } from './types.ts';
import type { Services } from '../core/types.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

function tokenMatches(header: string | undefined, token: string | null): boolean {
  if (token === null || !header) return false;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m?.[1]) return false;
  return timingSafeEqual(digest(m[1]), digest(token));
}

export function metricsRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/', async (c) => {
    const services = getServices();
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    // A request that sends credentials is judged by them alone: a wrong token is refused even on loopback.
    const auth = c.req.header('authorization');
    const allowed =
      auth !== undefined
        ? tokenMatches(auth, services.config.metrics.token)
        : isLoopbackRequest(incoming, c.req.raw.headers);
    if (!allowed) throw new AppError('metrics_not_allowed');
    const metrics = services.metrics;
    if (!metrics) throw new AppError('service_unavailable', { detail: 'This process keeps no metrics.' });
    c.header('Content-Type', metrics.contentType);
    c.header('Cache-Control', 'no-store');
    return c.body(await metrics.text());
  });
  return app;
}

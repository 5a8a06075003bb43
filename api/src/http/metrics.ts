// GET /metrics: this process's Prometheus text (api/src/observability/metrics.ts). Its counts cover
// every shop, so it answers only this machine (the one loopback guard, api/src/lib/loopback-guard.ts),
// unless FLOWPORT_METRICS_REMOTE=on, or the request carries the metrics token
// (FLOWPORT_METRICS_TOKEN) as a bearer token. A request that sends credentials is judged by them alone.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Hono } from 'hono';
import type { Services } from '../core/types.ts';
import { ENV } from '../config.ts';
import { AppError } from '../errors/problem.ts';
import { loopbackRefusal } from '../lib/loopback-guard.ts';
import type { AppEnv } from './types.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

function tokenMatches(header: string, token: string | null): boolean {
  if (token === null) return false;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m?.[1]) return false;
  return timingSafeEqual(digest(m[1]), digest(token));
}

export function metricsRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/', async (c) => {
    const services = getServices();
    const auth = c.req.header('authorization');
    if (auth !== undefined) {
      if (!tokenMatches(auth, services.config.metrics.token)) throw new AppError('metrics_not_allowed');
    } else if (!services.config.metrics.remote) {
      const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
      const refusal = loopbackRefusal(incoming, c.req.raw.headers, c.req.method);
      if (refusal) {
        throw new AppError('not_found', {
          detail: `/metrics answers only this machine: its counts cover every shop. ${refusal.detail} Send the metrics token (${ENV.metricsToken}) as a bearer token, or set ${ENV.metricsRemote}=on, to serve a scraper on another host.`,
        });
      }
    }
    const metrics = services.metrics;
    if (!metrics) throw new AppError('service_unavailable', { detail: 'This process keeps no metrics.' });
    c.header('Content-Type', metrics.contentType);
    c.header('Cache-Control', 'no-store');
    return c.body(await metrics.text());
  });
  return app;
}

// The one service verb behind every preview operation (api/src/operations/intents/previews.ts):
// the target named in the path, the rest of the input as the kind's parameters, recorded as an
// action intent by the engine. Changes nothing else.
import { PREVIEW_LIFETIME } from '../config.ts';
import type { OperationContext, Services } from '../core/types.ts';
import { AppError } from '../errors/problem.ts';
import { type IntentView, previewIntent } from './engine.ts';
import { sealAlertUrl } from './kinds/alert-subscribe.ts';
import { sealImportedSecret } from './kinds/endpoint-create.ts';
import type { IntentKind } from './types.ts';

type Params = Record<string, unknown>;

/** The lifetime a preview asked for, checked against PREVIEW_LIFETIME; the server's default when none. */
export function previewLifetimeMs(services: Services, asked: unknown): number {
  if (asked === undefined) return services.config.intents.previewTtlMs;
  const { minSeconds, maxSeconds, field } = PREVIEW_LIFETIME;
  if (typeof asked !== 'number' || !Number.isInteger(asked) || asked < minSeconds || asked > maxSeconds)
    throw new AppError('preview_lifetime_out_of_range', {
      detail: `${field} must be a whole number of seconds from ${minSeconds} to ${maxSeconds} (24 h); got ${JSON.stringify(asked)}. Leave it out for the default (${services.config.intents.previewTtlMs / 1000} s).`,
      errors: [{ path: field, message: `Between ${minSeconds} and ${maxSeconds}` }],
      extra: { min_seconds: minSeconds, max_seconds: maxSeconds },
    });
  return asked * 1000;
}

/** Parameters a kind stores differently from how they arrive (an imported secret is sealed first). */
const PREPARE: Partial<Record<IntentKind, (services: Services, params: Params) => Params>> = {
  endpoint_create: sealImportedSecret,
  alert_subscribe: sealAlertUrl,
};

/** Previews an action of `kind` on the target named by `input[target]` (none when `target` is null). */
export async function previewAction({
  ctx,
  kind,
  target,
  input,
}: {
  ctx: OperationContext;
  kind: IntentKind;
  target: string | null;
  input: Params;
}): Promise<IntentView> {
  const { [PREVIEW_LIFETIME.field]: asked, ...params } = input;
  // Checked before anything else, so an out-of-range lifetime is refused whatever the target.
  const lifetimeMs = previewLifetimeMs(ctx.services, asked);
  let targetId: string | null = null;
  if (target !== null) {
    targetId = String(params[target]);
    delete params[target];
  }
  const prepare = PREPARE[kind];
  return previewIntent(ctx, kind, targetId, prepare ? prepare(ctx.services, params) : params, lifetimeMs);
}

// The one service verb behind every preview operation (api/src/operations/intents/previews.ts):
// the target named in the path, the rest of the input as the kind's parameters, recorded as an
// action intent by the engine. Changes nothing else.
import type { OperationContext, Services } from '../core/types.ts';
import { type IntentView, previewIntent } from './engine.ts';
import { sealAlertUrl } from './kinds/alert-subscribe.ts';
import { sealImportedSecret } from './kinds/endpoint-create.ts';
import type { IntentKind } from './types.ts';

type Params = Record<string, unknown>;

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
  const params: Params = { ...input };
  let targetId: string | null = null;
  if (target !== null) {
    targetId = String(params[target]);
    delete params[target];
  }
  const prepare = PREPARE[kind];
  return previewIntent(ctx, kind, targetId, prepare ? prepare(ctx.services, params) : params);
}

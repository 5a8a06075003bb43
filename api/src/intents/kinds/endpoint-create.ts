// Endpoint create: the preview shows the normalised configuration that will be
// stored; confirmation creates the endpoint and returns its secret once.
// An imported secret (Stripe, Shopify, Slack, Svix generate their own) is sealed
// with the SecretBox before the intent is stored, so it never sits in plain text.
import { endpointWarnings } from '../../services/endpoints.ts';
import { joinUrl } from '../../docs-paths.ts';
import { INGEST_PATH_PREFIX } from '../../lib/package-info.ts';
import {
  buildEndpointConfig,
  configFromSnake,
  configToSnake,
  type CreateEndpointInput,
  createEndpoint,
  type EndpointMapping,
  type HmacParams,
  validateSecretFor,
} from '../../services/endpoints.ts';
import { type AuthMode, countEndpointsNamed, type TriggerVariant } from '../../store/tables/endpoints.ts';
import type { Services } from '../../core/types.ts';
import type { IntentKindDef } from '../types.ts';
import { jsonDiff } from './common.ts';

export interface EndpointCreateParams {
  name: string;
  sender_label?: string;
  trigger_variant: TriggerVariant;
  auth_mode: AuthMode;
  /** As the API spells it (snake_case, e.g. `timestamp_header`). */
  hmac?: Record<string, unknown>;
  static_header?: { header?: string };
  basic?: { username?: string };
  tolerance_sec?: number;
  dedupe_window_hours?: number;
  /** As the API spells it (snake_case, e.g. `resource_id_path`). */
  mapping?: Record<string, unknown>;
  /** Set by the operation from an imported `secret`: sealed with the SecretBox, never plain. */
  secret_sealed?: string;
  secret_last4?: string;
}

export function createInput(shopId: string, p: EndpointCreateParams): CreateEndpointInput {
  return {
    shopId,
    name: p.name,
    senderLabel: p.sender_label,
    triggerVariant: p.trigger_variant,
    authMode: p.auth_mode,
    hmac: p.hmac ? configFromSnake<Partial<HmacParams>>(p.hmac) : undefined,
    staticHeader: p.static_header,
    basic: p.basic,
    toleranceSec: p.tolerance_sec,
    dedupeWindowHours: p.dedupe_window_hours,
    mapping: p.mapping ? configFromSnake<Partial<EndpointMapping>>(p.mapping) : undefined,
  };
}

export const endpointCreateKind: IntentKindDef<EndpointCreateParams> = {
  kind: 'endpoint_create',
  label: 'endpoint create',
  async inspect(kc, _target, params) {
    const config = buildEndpointConfig(createInput(kc.shop.id, params));
    if (params.secret_sealed) validateSecretFor(config.authMode, kc.services.secrets.decrypt(params.secret_sealed));
    const existing = await countEndpointsNamed(kc.db, kc.shop.id, config.name);
    const warnings: string[] = [];
    if (existing > 0) warnings.push(`Another endpoint of this shop is already named "${config.name}".`);
    for (const w of endpointWarnings(config)) warnings.push(w.detail);
    return {
      targetType: 'shop',
      targetId: kc.shop.id,
      fingerprint: null,
      preview: {
        summary: `Create endpoint "${config.name}" (${config.authMode}, trigger ${config.triggerVariant}) for ${kc.shop.domain}.`,
        target: { shop_domain: kc.shop.domain },
        current_config: null,
        effects: [
          'Creates an active endpoint with configuration version 1 and an ingest URL.',
          params.secret_sealed
            ? `Stores the imported signing secret (ending …${params.secret_last4}) encrypted.`
            : `Generates a ${config.authMode} signing secret; it is shown once, in the confirmation response.`,
          'Counts 1 execution against the monthly plan.',
        ],
        warnings,
        details: {
          config: configToSnake(config),
          diff: jsonDiff({}, configToSnake(config)),
          ingest_url_pattern: joinUrl(kc.services.config.publicUrl, `${INGEST_PATH_PREFIX}/<endpoint id>`),
          effect_on_queued_events: 'None: a new endpoint has no events.',
        },
      },
    };
  },

  async execute(kc, intent, params) {
    const secret = params.secret_sealed ? kc.services.secrets.decrypt(params.secret_sealed) : null;
    const created = await createEndpoint(
      { db: kc.db, secrets: kc.services.secrets, now: () => kc.now },
      { ...createInput(kc.shop.id, params), secret, createdBy: intent.id },
    );
    const ingestUrl = joinUrl(kc.services.config.publicUrl, `${INGEST_PATH_PREFIX}/${created.endpoint.id}`);
    return {
      result: {
        endpoint_id: created.endpoint.id,
        ingest_url: ingestUrl,
        config_version: 1,
        secret_last4: created.secret.slice(-4),
        secret_shown_once: !secret,
        links: { endpoint: `/agent/v1/endpoints/${created.endpoint.id}` },
      },
      once: secret ? undefined : { secret: created.secret },
    };
  },
};

/** An imported secret is sealed before the intent is stored: intents are readable, secrets are not. */
export function sealImportedSecret(services: Services, params: Record<string, unknown>): Record<string, unknown> {
  const { secret, ...rest } = params;
  if (typeof secret !== 'string' || !secret) return rest;
  return { ...rest, secret_sealed: services.secrets.encrypt(secret), secret_last4: secret.slice(-4) };
}

// Operator CLI handlers for intake setup: `flowport shops list|create` and
// `flowport endpoints create`. Human-only; they act on the local store. The
// endpoint secret is printed here once and never again.
import { operatorPublicUrl } from '../../services/served-url.ts';
import type { OperatorHandler, OptionValues } from '../handlers.ts';
import { authModeDocsPath, joinUrl } from '../../docs-paths.ts';
import { AppError } from '../../errors/problem.ts';
import { INGEST_PATH_PREFIX } from '../../lib/package-info.ts';
import { PLAN_IDS, type PlanId } from '../../plans.ts';
import { OPERATOR_ACTOR } from '../../audit/log.ts';
import {
  configToSnake,
  createEndpoint,
  type EndpointConfig,
  getEndpoint,
  MAX_ROTATION_OVERLAP_HOURS,
  importEndpointSecret,
  type ExternalIdSource,
} from '../../services/endpoints.ts';
import {
  AUTH_MODES,
  type AuthMode,
  type EndpointRow,
  TRIGGER_VARIANTS,
  type TriggerVariant,
} from '../../store/tables/endpoints.ts';
import { createShop, getShop, listShops } from '../../services/shops.ts';
import { AUTH_MODE_FACTS, importSecretCommandFor } from '../../intake/auth-modes.ts';

/**
 * The headers this endpoint reads, as configured: the mode's fixed headers, except that the
 * hmac_sha256 signature and timestamp headers, the static header and an external id header
 * are the ones the operator chose (the sender must send exactly these).
 */
function senderHeaders(config: EndpointConfig, modeHeaders: readonly { name: string }[]): string[] {
  let names: string[];
  if (config.hmac) names = [config.hmac.header, ...(config.hmac.timestampHeader ? [config.hmac.timestampHeader] : [])];
  else if (config.staticHeader) names = [config.staticHeader.header];
  else names = modeHeaders.map((h) => h.name);
  const ext = config.mapping.externalId;
  if (ext.kind === 'header' && !names.some((n) => n.toLowerCase() === ext.name.toLowerCase())) names.push(ext.name);
  return names;
}

type Handler = OperatorHandler;

function str(o: OptionValues, name: string): string | undefined {
  const v = o[name];
  return typeof v === 'string' ? v : undefined;
}

function list(o: OptionValues, name: string): string[] {
  const v = o[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

function intOpt(o: OptionValues, name: string): number | undefined {
  const v = str(o, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new AppError('invalid_request', { detail: `--${name} must be a whole number.` });
  return n;
}

type Env = Record<string, string | undefined>;

/** Reads a secret from a named environment variable so it never lands in shell history. */
function secretFromEnv(o: OptionValues, env: Env): string | null {
  const name = str(o, 'secret-env');
  if (!name) return null;
  const v = env[name];
  if (!v)
    throw new AppError('invalid_request', {
      detail: `--secret-env ${name}: the environment variable is empty or unset.`,
    });
  return v.trim();
}

const shopsList: Handler = async ({ services }) => {
  const rows = await listShops(services);
  const json = rows.map((shop) => ({
    id: shop.id,
    domain: shop.domain,
    plan: shop.plan,
    sandbox: shop.sandbox === 1,
    connection_status: shop.connection_status,
    has_access_token: shop.access_token_enc !== null,
    created_at: new Date(Number(shop.created_at)).toISOString(),
  }));
  const text = json.length
    ? json
        .map(
          (s) =>
            `${s.id}  ${s.domain}  plan ${s.plan}${s.sandbox ? '  sandbox' : ''}  ${s.connection_status}${s.has_access_token ? '' : '  (no Admin API token)'}`,
        )
        .join('\n')
    : 'No shops. Create one with `npx flowport shops create`.';
  return { json, text };
};

const shopsCreate: Handler = async ({ options, services, env }) => {
  const plan = str(options, 'plan') ?? 'free';
  if (!(PLAN_IDS as readonly string[]).includes(plan))
    throw new AppError('invalid_request', { detail: `--plan must be one of ${PLAN_IDS.join(', ')}.` });
  const tokenEnv = str(options, 'access-token-env');
  const accessToken = tokenEnv ? env[tokenEnv] : undefined;
  if (tokenEnv && !accessToken)
    throw new AppError('invalid_request', {
      detail: `--access-token-env ${tokenEnv}: the environment variable is empty or unset.`,
    });
  let shop: Awaited<ReturnType<typeof createShop>>;
  try {
    shop = await createShop(services, {
      domain: str(options, 'domain') ?? '',
      plan: plan as PlanId,
      sandbox: options.sandbox === true,
      accessToken: accessToken ?? null,
    });
  } catch (err) {
    if (err instanceof AppError) throw err;
    const msg = err instanceof Error ? err.message : String(err);
    throw new AppError('invalid_request', {
      detail: /unique/i.test(msg) ? 'A shop with this domain already exists.' : msg,
    });
  }
  const json = {
    id: shop.id,
    domain: shop.domain,
    plan: shop.plan,
    sandbox: shop.sandbox === 1,
    has_access_token: shop.access_token_enc !== null,
    created_at: new Date(shop.created_at).toISOString(),
  };
  return {
    json,
    text: `Created shop ${shop.id} (${shop.domain}, plan ${shop.plan}${shop.sandbox ? ', sandbox' : ''}).`,
  };
};

/** What to do with the secret just printed: store it in the sender, or (sender-made secrets) import the real one. */
function secretNotice(mode: AuthMode, imported: string | null, endpointId: string): string {
  const facts = AUTH_MODE_FACTS[mode];
  const importCommand = importSecretCommandFor(facts);
  if (imported) return `Imported; afterwards only secret_last4 is shown.`;
  if (importCommand)
    return `The sender makes its own signing secret for this mode, so this generated one only suits local tests. Once the sender shows its secret, import it: ${facts.secretEnv}=<SIGNING_SECRET> ${importCommand.replace('<ENDPOINT_ID>', endpointId)}`;
  return 'Shown once. Store it in the sender now; afterwards only secret_last4 is shown. Rotate to get a new one.';
}

const endpointsCreate: Handler = async ({ options, services, env }) => {
  // The URL printed beside a secret shown once must be the one the server serves: known
  // before anything is created, or the command refuses.
  const publicUrl = await operatorPublicUrl(services.db, env);
  const shopId = str(options, 'shop') ?? '';
  if (!(await getShop(services, shopId)))
    throw new AppError('not_found', {
      detail: `No shop ${shopId} in this store. Create one with \`npx flowport shops create\`.`,
    });
  const authMode = str(options, 'auth-mode') as AuthMode;
  if (!(AUTH_MODES as readonly string[]).includes(authMode))
    throw new AppError('invalid_request', { detail: `--auth-mode must be one of ${AUTH_MODES.join(', ')}.` });
  const triggerVariant = str(options, 'trigger-variant') as TriggerVariant;
  if (!(TRIGGER_VARIANTS as readonly string[]).includes(triggerVariant)) {
    throw new AppError('invalid_request', {
      detail: `--trigger-variant must be one of ${TRIGGER_VARIANTS.join(', ')}.`,
    });
  }
  const extHeader = str(options, 'external-id-header');
  const extPath = str(options, 'external-id-path');
  if (extHeader && extPath)
    throw new AppError('invalid_request', { detail: 'Give --external-id-header or --external-id-path, not both.' });
  const externalId: ExternalIdSource = extHeader
    ? { kind: 'header', name: extHeader }
    : extPath
      ? { kind: 'json', path: extPath }
      : { kind: 'preset' };
  const encoding = str(options, 'signature-encoding');
  if (encoding && encoding !== 'hex' && encoding !== 'base64')
    throw new AppError('invalid_request', { detail: '--signature-encoding must be hex or base64.' });
  const hmac: Record<string, unknown> = {};
  if (str(options, 'signature-header')) hmac.header = str(options, 'signature-header');
  if (encoding) hmac.encoding = encoding;
  if (str(options, 'signature-prefix') !== undefined) hmac.prefix = str(options, 'signature-prefix');
  if (str(options, 'timestamp-header')) hmac.timestampHeader = str(options, 'timestamp-header');
  const imported = secretFromEnv(options, env);
  const { endpoint, config, secret } = await createEndpoint(services, {
    shopId,
    name: str(options, 'name') ?? '',
    senderLabel: str(options, 'sender-label'),
    triggerVariant,
    authMode,
    hmac,
    staticHeader: str(options, 'static-header') ? { header: str(options, 'static-header') as string } : undefined,
    basic: str(options, 'basic-user') ? { username: str(options, 'basic-user') as string } : undefined,
    toleranceSec: intOpt(options, 'tolerance-sec'),
    dedupeWindowHours: intOpt(options, 'dedupe-window-hours'),
    mapping: {
      resourceIdPath: str(options, 'resource-id-path') ?? null,
      relatedResourceIdPath: str(options, 'related-resource-id-path') ?? null,
      requiredPaths: list(options, 'required-path'),
      externalId,
      ...(str(options, 'event-type-path') !== undefined
        ? { eventTypePath: str(options, 'event-type-path') || null }
        : {}),
    },
    secret: imported,
    createdBy: 'operator-cli',
  });
  const facts = AUTH_MODE_FACTS[authMode];
  const json: Record<string, unknown> = {
    id: endpoint.id,
    shop_id: endpoint.shop_id,
    name: endpoint.name,
    ingest_url: joinUrl(publicUrl, `${INGEST_PATH_PREFIX}/${endpoint.id}`),
    auth_mode: authMode,
    trigger_variant: endpoint.trigger_variant,
    status: endpoint.status,
    config_version: endpoint.config_version,
    secret,
    secret_last4: endpoint.secret_last4,
    secret_notice: secretNotice(authMode, imported, endpoint.id),
    headers: senderHeaders(config, facts.headers),
    mapping: configToSnake(config.mapping),
    docs_url: joinUrl(publicUrl, authModeDocsPath(authMode)),
  };
  if (config.hmac) json.hmac = configToSnake(config.hmac);
  if (config.staticHeader) json.header_name = config.staticHeader.header;
  if (config.basic) json.basic_user = config.basic.username;
  if (config.toleranceSec !== undefined) json.tolerance_sec = config.toleranceSec;
  const text = [
    `Created endpoint ${endpoint.id} (${authMode}, ${endpoint.trigger_variant}).`,
    `  Ingest URL: ${json.ingest_url}`,
    config.staticHeader ? `  Header:     ${config.staticHeader.header}` : null,
    config.basic ? `  Basic user: ${config.basic.username}` : null,
    `  Secret:     ${secret}   (shown once)`,
    `  ${json.secret_notice}`,
    `  Sender setup: ${json.docs_url}`,
  ]
    .filter((l) => l !== null)
    .join('\n');
  return { json, text };
};

/**
 * `flowport endpoints import-secret`: replaces an endpoint's secret with one the sender made
 * (Stripe shows its secret only after it has the ingest URL). The previous secret keeps
 * verifying for --overlap-hours (default 0). Audited; the secret is never printed.
 */
const endpointsImportSecret: Handler = async ({ options, services, env }) => {
  const endpointId = str(options, 'endpoint') ?? '';
  const row: EndpointRow | undefined = await getEndpoint(services, endpointId);
  if (!row || row.deleted_at) throw new AppError('not_found', { detail: `No endpoint ${endpointId} in this store.` });
  if (row.status === 'archived')
    throw new AppError('endpoint_archived', {
      detail: `Endpoint ${endpointId} is archived and accepts no events; there is nothing to import a secret for.`,
    });
  const secret = secretFromEnv(options, env);
  if (!secret)
    throw new AppError('invalid_request', { detail: 'Give --secret-env <name>: the variable holding the secret.' });
  const overlap = str(options, 'overlap-hours') === undefined ? 0 : Number(str(options, 'overlap-hours'));
  if (!Number.isFinite(overlap) || overlap < 0 || overlap > MAX_ROTATION_OVERLAP_HOURS)
    throw new AppError('invalid_request', {
      detail: `--overlap-hours must be between 0 and ${MAX_ROTATION_OVERLAP_HOURS}.`,
    });
  const rotated = await importEndpointSecret(services, row, secret, overlap, OPERATOR_ACTOR);
  // A server on the same PostgreSQL database applies it at once (NOTIFY); on SQLite within the cache time.
  services.hooks.endpointChanged?.(rotated.endpointId);
  const previousUntil =
    rotated.previousSecretExpiresAt === null ? null : new Date(rotated.previousSecretExpiresAt).toISOString();
  const json = {
    endpoint_id: rotated.endpointId,
    auth_mode: row.auth_mode,
    secret_last4: rotated.secretLast4,
    config_version: rotated.configVersion,
    previous_secret_valid_until: previousUntil,
    takes_effect_within_s: services.config.intake.endpointCacheMs / 1000,
  };
  const text = [
    `Imported a new ${row.auth_mode} secret (…${rotated.secretLast4}) into endpoint ${rotated.endpointId}; configuration version ${rotated.configVersion}.`,
    previousUntil
      ? `  The previous secret keeps verifying until ${previousUntil}.`
      : '  The previous secret stopped verifying.',
    `  A running server uses the new secret within ${json.takes_effect_within_s} s.`,
  ].join('\n');
  return { json, text };
};

export const SHOPS_OPERATOR_HANDLERS: Record<string, Handler> = {
  'shops list': shopsList,
  'shops create': shopsCreate,
  'endpoints create': endpointsCreate,
  'endpoints import-secret': endpointsImportSecret,
};

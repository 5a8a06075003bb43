// Endpoints: one sender lane each. Config is versioned; secrets are encrypted
// at rest, shown once on create, and afterwards only as their last 4 characters.
import { randomBytes } from 'node:crypto';
import { type AuditActor, appendAudit } from '../audit/log.ts';
import { AppError } from '../errors/problem.ts';
import { newId } from '../ids.ts';
import type { Services } from '../core/types.ts';
import {
  type AuthMode,
  type EndpointRow,
  type EndpointStatus,
  findEndpoint,
  insertEndpointRow,
  insertEndpointVersion,
  TRIGGER_VARIANTS,
  AUTH_MODES,
  type TriggerVariant,
  updateEndpointSecret,
  updateEndpointStatus,
} from '../store/tables/endpoints.ts';

/** Parameters of the generic hmac_sha256 mode (presets fix these). */
export interface HmacParams {
  header: string;
  encoding: 'hex' | 'base64';
  prefix: string;
  timestampHeader: string | null;
  toleranceSec: number;
}

/** static_header: the header whose value is the secret (name generated unless given). */
export interface StaticHeaderParams {
  header: string;
}

/** basic: the user name (not secret); the password is the endpoint secret. */
export interface BasicParams {
  username: string;
}

/** Where a value comes from on the request. Header names are lowercase. */
export type ValueSource = { from: 'header'; names: readonly string[] } | { from: 'json'; path: string };

/**
 * The sender event id each preset reads (GitHub's delivery id, Stripe's event id …): the auth
 * modes' facts (intake/auth-modes.ts) take it from here. A mode absent has none.
 */
export const PRESET_EXTERNAL_IDS: Readonly<Partial<Record<AuthMode, ValueSource>>> & {
  github: ValueSource;
  shopify: ValueSource;
  stripe: ValueSource;
  standard_webhooks: ValueSource;
  slack: ValueSource;
} = {
  github: { from: 'header', names: ['x-github-delivery'] },
  shopify: { from: 'header', names: ['x-shopify-event-id', 'x-shopify-webhook-id'] },
  stripe: { from: 'json', path: 'id' },
  standard_webhooks: { from: 'header', names: ['webhook-id', 'svix-id'] },
  slack: { from: 'json', path: 'event_id' },
};

export type ExternalIdSource =
  | { kind: 'preset' }
  | { kind: 'header'; name: string }
  | { kind: 'json'; path: string }
  | { kind: 'none' };

export interface EndpointMapping {
  resourceIdPath: string | null;
  relatedResourceIdPath: string | null;
  requiredPaths: string[];
  externalId: ExternalIdSource;
  eventTypePath: string | null;
}

/**
 * The external id an endpoint's config dedupes on, as it applies: `preset` only when the auth mode
 * has one (PRESET_EXTERNAL_IDS); a `preset` of a mode without one (the default of hmac_sha256,
 * static_header, basic) is `none`. Endpoint reads show this; intake reads the id from it.
 */
export function effectiveExternalId(config: Pick<EndpointConfig, 'authMode' | 'mapping'>): ExternalIdSource {
  const ext = config.mapping.externalId;
  return ext.kind === 'preset' && PRESET_EXTERNAL_IDS[config.authMode] === undefined ? { kind: 'none' } : ext;
}

/** The advice an endpoint with no dedupe id carries (endpoint reads, the create preview, setup's dedupe_ids check). */
export const NO_DEDUPE_ID =
  "No dedupe id: the same webhook sent twice runs the workflow twice. Set mapping.external_id to the header or JSON path that holds the sender's event id (an endpoint edit).";

/** What an endpoint read warns about (advisory: events still flow): today, a missing dedupe id. */
export function endpointWarnings(
  config: Pick<EndpointConfig, 'authMode' | 'mapping'>,
): { code: 'no_dedupe_id'; severity: 'advisory'; detail: string }[] {
  return effectiveExternalId(config).kind === 'none'
    ? [{ code: 'no_dedupe_id', severity: 'advisory', detail: NO_DEDUPE_ID }]
    : [];
}

/** Non-secret configuration; a new version is recorded on every change. */
export interface EndpointConfig {
  name: string;
  senderLabel: string;
  triggerVariant: TriggerVariant;
  authMode: AuthMode;
  hmac?: HmacParams;
  staticHeader?: StaticHeaderParams;
  basic?: BasicParams;
  /** Timestamp tolerance for presets that sign one (stripe, standard_webhooks, slack); default 300. */
  toleranceSec?: number;
  /** Overrides the plan's dedupe window (hours), never longer than the plan allows. */
  dedupeWindowHours?: number;
  mapping: EndpointMapping;
}

export const DEFAULT_HMAC: HmacParams = {
  header: 'x-flowport-signature',
  encoding: 'hex',
  prefix: 'sha256=',
  timestampHeader: null,
  toleranceSec: 300,
};

/** A mapping that reads only the event type (`type`): no resource id, no required paths, no dedupe. */
export const PLAIN_MAPPING: EndpointMapping = {
  resourceIdPath: null,
  relatedResourceIdPath: null,
  requiredPaths: [],
  externalId: { kind: 'none' },
  eventTypePath: 'type',
};

/**
 * The one naming rule for endpoint configuration on the wire and at rest: snake_case (ADR 1000).
 * In code the configuration keeps its TypeScript (camelCase) field names; these keys are the
 * only ones that differ, and every read and write of `config_json`, every API input and every
 * output goes through configToSnake()/configFromSnake(). Migration 1001 renamed stored keys.
 */
export const CONFIG_KEY_NAMES = {
  senderLabel: 'sender_label',
  triggerVariant: 'trigger_variant',
  authMode: 'auth_mode',
  staticHeader: 'static_header',
  toleranceSec: 'tolerance_sec',
  dedupeWindowHours: 'dedupe_window_hours',
  timestampHeader: 'timestamp_header',
  resourceIdPath: 'resource_id_path',
  relatedResourceIdPath: 'related_resource_id_path',
  requiredPaths: 'required_paths',
  externalId: 'external_id',
  eventTypePath: 'event_type_path',
} as const;

const TO_CAMEL: Record<string, string> = Object.fromEntries(
  Object.entries(CONFIG_KEY_NAMES).map(([camel, snake]) => [snake, camel]),
);

function renameKeys(value: unknown, names: Record<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => renameKeys(v, names));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [names[k] ?? k, renameKeys(v, names)]),
  );
}

/** A configuration (or part of one: mapping, hmac) as the API and the store spell it. */
export function configToSnake<T>(config: T): Record<string, unknown> {
  return renameKeys(config, CONFIG_KEY_NAMES) as Record<string, unknown>;
}

/** An API input or stored configuration (snake_case) with the field names code uses. */
export function configFromSnake<T>(value: unknown): T {
  return renameKeys(value, TO_CAMEL) as T;
}

/** What `config_json` stores. */
export function storedConfigJson(config: EndpointConfig): string {
  return JSON.stringify(configToSnake(config));
}

export function endpointConfig(row: EndpointRow): EndpointConfig {
  return configFromSnake<EndpointConfig>(JSON.parse(row.config_json));
}

export function generateSecret(): string {
  return `fpsec_${randomBytes(24).toString('base64url')}`;
}

export async function insertEndpoint(
  services: Pick<Services, 'db' | 'secrets' | 'now'>,
  shopId: string,
  config: EndpointConfig,
  secret: string | null,
  createdBy: string | null = null,
): Promise<EndpointRow> {
  const now = services.now();
  const row: EndpointRow = {
    id: newId('endpoint'),
    shop_id: shopId,
    name: config.name,
    sender_label: config.senderLabel,
    trigger_variant: config.triggerVariant,
    auth_mode: config.authMode,
    status: 'active',
    config_version: 1,
    config_json: storedConfigJson(config),
    secret_enc: secret ? services.secrets.encrypt(secret) : null,
    secret_last4: secret ? secret.slice(-4) : null,
    previous_secret_enc: null,
    previous_secret_expires_at: null,
    created_at: now,
    updated_at: now,
    archived_at: null,
    deleted_at: null,
  };
  await services.db.tx(async (tx) => {
    await insertEndpointRow(tx, row);
    await insertEndpointVersion(tx, {
      endpointId: row.id,
      version: 1,
      configJson: row.config_json,
      createdAt: now,
      createdBy,
    });
  });
  return row;
}

export async function getEndpoint(services: Pick<Services, 'db'>, id: string): Promise<EndpointRow | undefined> {
  return findEndpoint(services.db, id);
}

export const DEFAULT_TOLERANCE_SEC = 300;
export const MAX_ROTATION_OVERLAP_HOURS = 72;
export const MAX_REQUIRED_PATHS = 5;
/** Bounds of an endpoint's signature age tolerance (seconds) and dedupe window (hours). */
export const MAX_TOLERANCE_SEC = 3600;
export const MAX_DEDUPE_WINDOW_HOURS = 24 * 30;
export const DEFAULT_STATIC_HEADER = 'x-flowport-token';

/**
 * A fresh secret in the format the sender's own library expects: Stripe signs
 * with the whole `whsec_…` string; Standard Webhooks needs `whsec_<base64>`;
 * the rest take any string.
 */
export function generateSecretFor(mode: AuthMode): string {
  switch (mode) {
    case 'stripe':
      return `whsec_${randomBytes(24).toString('hex')}`;
    case 'standard_webhooks':
      return `whsec_${randomBytes(24).toString('base64')}`;
    case 'static_header':
      return `fptok_${randomBytes(24).toString('base64url')}`;
    case 'basic':
      return randomBytes(24).toString('base64url');
    default:
      return generateSecret();
  }
}

/** Rejects imported secrets the sender library would not accept (e.g. a Stripe secret without `whsec_`). */
export function validateSecretFor(mode: AuthMode, secret: string): void {
  const fail = (detail: string) => {
    throw new AppError('invalid_request', { detail, errors: [{ path: 'secret', message: detail }] });
  };
  if (secret.length < 8 || secret.length > 512 || /\s/.test(secret))
    fail('The secret must be 8–512 characters without whitespace.');
  if (mode === 'stripe' && !secret.startsWith('whsec_'))
    fail('A Stripe signing secret starts with `whsec_` (copy it from the Stripe webhook endpoint).');
  if (mode === 'standard_webhooks') {
    const b64 = secret.startsWith('whsec_') ? secret.slice(6) : secret;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || Buffer.from(b64, 'base64').length < 16) {
      fail('A Standard Webhooks secret is `whsec_` followed by base64 of at least 16 bytes.');
    }
  }
  if (mode === 'basic' && secret.includes(':')) fail('A Basic password cannot contain `:`.');
}

export interface CreateEndpointInput {
  shopId: string;
  name: string;
  senderLabel?: string;
  triggerVariant: TriggerVariant;
  authMode: AuthMode;
  hmac?: Partial<HmacParams>;
  staticHeader?: Partial<StaticHeaderParams>;
  basic?: Partial<BasicParams>;
  toleranceSec?: number;
  dedupeWindowHours?: number;
  mapping?: Partial<EndpointMapping>;
  /** Import a secret the sender generated (Stripe, Shopify, Slack, Svix); otherwise one is generated. */
  secret?: string | null;
  createdBy?: string | null;
}

const HEADER_NAME_RE = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
const PATH_RE = /^(\$\.)?[A-Za-z0-9_$@-]+(\.[A-Za-z0-9_$@-]+){0,15}$/;

/** Validates and normalises a create input into a stored config (throws invalid_request). */
export function buildEndpointConfig(input: CreateEndpointInput): EndpointConfig {
  const errors: { path: string; message: string }[] = [];
  const name = input.name?.trim() ?? '';
  if (!name || name.length > 100) errors.push({ path: 'name', message: 'Name is required (1–100 characters).' });
  if (!(TRIGGER_VARIANTS as readonly string[]).includes(input.triggerVariant)) {
    errors.push({ path: 'trigger_variant', message: `One of ${TRIGGER_VARIANTS.join(', ')}.` });
  }
  if (!(AUTH_MODES as readonly string[]).includes(input.authMode))
    errors.push({ path: 'auth_mode', message: `One of ${AUTH_MODES.join(', ')}.` });
  const m = input.mapping ?? {};
  const requiredPaths = m.requiredPaths ?? [];
  if (requiredPaths.length > MAX_REQUIRED_PATHS)
    errors.push({ path: 'mapping.required_paths', message: `At most ${MAX_REQUIRED_PATHS} required paths.` });
  for (const [key, value] of [
    ['mapping.resource_id_path', m.resourceIdPath],
    ['mapping.related_resource_id_path', m.relatedResourceIdPath],
    ['mapping.event_type_path', m.eventTypePath],
    ...requiredPaths.map((p, i) => [`mapping.required_paths.${i}`, p] as const),
  ] as const) {
    if (value && !PATH_RE.test(value))
      errors.push({ path: key, message: 'A dotted JSON path like `data.object.id` (array indexes as numbers).' });
  }
  if (input.triggerVariant !== 'external_event' && !m.resourceIdPath) {
    errors.push({
      path: 'mapping.resource_id_path',
      message: `The ${input.triggerVariant} trigger needs a resource id path (the Shopify id it is about).`,
    });
  }
  const ext = m.externalId ?? { kind: 'preset' };
  if (ext.kind === 'header' && !HEADER_NAME_RE.test(ext.name))
    errors.push({ path: 'mapping.external_id.name', message: 'A valid header name.' });
  if (ext.kind === 'json' && !PATH_RE.test(ext.path))
    errors.push({ path: 'mapping.external_id.path', message: 'A dotted JSON path.' });
  const tol = input.toleranceSec ?? input.hmac?.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  if (!Number.isInteger(tol) || tol < 1 || tol > MAX_TOLERANCE_SEC)
    errors.push({ path: 'tolerance_sec', message: `Whole seconds between 1 and ${MAX_TOLERANCE_SEC}.` });
  if (
    input.dedupeWindowHours !== undefined &&
    (!Number.isInteger(input.dedupeWindowHours) ||
      input.dedupeWindowHours < 0 ||
      input.dedupeWindowHours > MAX_DEDUPE_WINDOW_HOURS)
  ) {
    errors.push({
      path: 'dedupe_window_hours',
      message: `Whole hours between 0 and ${MAX_DEDUPE_WINDOW_HOURS} (the plan window caps it).`,
    });
  }
  const config: EndpointConfig = {
    name,
    senderLabel: (input.senderLabel ?? input.authMode).trim().slice(0, 100),
    triggerVariant: input.triggerVariant,
    authMode: input.authMode,
    mapping: {
      resourceIdPath: m.resourceIdPath ?? null,
      relatedResourceIdPath: m.relatedResourceIdPath ?? null,
      requiredPaths,
      externalId: ext,
      eventTypePath: m.eventTypePath === undefined ? 'type' : m.eventTypePath,
    },
  };
  if (input.authMode === 'hmac_sha256') {
    const h = { ...DEFAULT_HMAC, ...input.hmac, toleranceSec: tol };
    h.header = h.header.toLowerCase();
    if (!HEADER_NAME_RE.test(h.header)) errors.push({ path: 'hmac.header', message: 'A valid header name.' });
    if (h.encoding !== 'hex' && h.encoding !== 'base64')
      errors.push({ path: 'hmac.encoding', message: 'hex or base64.' });
    if (h.prefix.length > 32) errors.push({ path: 'hmac.prefix', message: 'At most 32 characters.' });
    if (h.timestampHeader) {
      h.timestampHeader = h.timestampHeader.toLowerCase();
      if (!HEADER_NAME_RE.test(h.timestampHeader))
        errors.push({ path: 'hmac.timestampHeader', message: 'A valid header name.' });
    }
    config.hmac = h;
  } else if (input.authMode === 'stripe' || input.authMode === 'standard_webhooks' || input.authMode === 'slack') {
    config.toleranceSec = tol;
  } else if (input.authMode === 'static_header') {
    const header = (input.staticHeader?.header ?? DEFAULT_STATIC_HEADER).toLowerCase();
    if (!HEADER_NAME_RE.test(header) || header === 'authorization' || header === 'content-type') {
      errors.push({
        path: 'static_header.header',
        message: 'A valid custom header name (not Authorization or Content-Type).',
      });
    }
    config.staticHeader = { header };
  } else if (input.authMode === 'basic') {
    const username = input.basic?.username ?? `fp_${randomBytes(6).toString('hex')}`;
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(username))
      errors.push({ path: 'basic.username', message: 'Letters, digits, `.`, `_`, `-` (1–64).' });
    config.basic = { username };
  }
  if (input.dedupeWindowHours !== undefined) config.dedupeWindowHours = input.dedupeWindowHours;
  if (errors.length)
    throw new AppError('invalid_request', { detail: errors.map((e) => `${e.path}: ${e.message}`).join(' '), errors });
  return config;
}

/** Creates an endpoint; the returned secret is shown once and never again. */
export async function createEndpoint(
  services: Pick<Services, 'db' | 'secrets' | 'now'>,
  input: CreateEndpointInput,
): Promise<{ endpoint: EndpointRow; config: EndpointConfig; secret: string }> {
  const config = buildEndpointConfig(input);
  if (input.secret) validateSecretFor(config.authMode, input.secret);
  const secret = input.secret ?? generateSecretFor(config.authMode);
  const endpoint = await insertEndpoint(services, input.shopId, config, secret, input.createdBy ?? null);
  return { endpoint, config, secret };
}

export interface RotatedSecret {
  endpointId: string;
  secret: string;
  secretLast4: string;
  configVersion: number;
  /** When the previous secret stops verifying (ms since epoch); null when the overlap is 0. */
  previousSecretExpiresAt: number | null;
}

/**
 * Replaces the endpoint's secret. The previous one keeps verifying for
 * `overlapHours` (0–72) so the sender can be updated without dropping events.
 * Bumps the config version so receipts show which requests came after it.
 */
export async function rotateEndpointSecret(
  services: Pick<Services, 'db' | 'secrets' | 'now'>,
  endpointId: string,
  overlapHours: number,
  options: { newSecret?: string | null; rotatedBy?: string | null } = {},
): Promise<RotatedSecret> {
  if (!Number.isFinite(overlapHours) || overlapHours < 0 || overlapHours > MAX_ROTATION_OVERLAP_HOURS) {
    throw new AppError('invalid_request', {
      detail: `overlapHours must be between 0 and ${MAX_ROTATION_OVERLAP_HOURS}.`,
      errors: [{ path: 'overlap_hours', message: `0–${MAX_ROTATION_OVERLAP_HOURS} hours.` }],
    });
  }
  return services.db.tx(async (tx) => {
    const row = await findEndpoint(tx, endpointId);
    if (!row || row.deleted_at) throw new AppError('not_found', { detail: 'No such endpoint.' });
    if (options.newSecret) validateSecretFor(row.auth_mode, options.newSecret);
    const secret = options.newSecret ?? generateSecretFor(row.auth_mode);
    const now = services.now();
    const expiresAt = overlapHours > 0 && row.secret_enc ? now + Math.round(overlapHours * 3_600_000) : null;
    const version = row.config_version + 1;
    await updateEndpointSecret(tx, {
      id: endpointId,
      secretEnc: services.secrets.encrypt(secret),
      secretLast4: secret.slice(-4),
      previousSecretEnc: expiresAt ? row.secret_enc : null,
      previousSecretExpiresAt: expiresAt,
      configVersion: version,
      now,
    });
    await insertEndpointVersion(tx, {
      endpointId,
      version,
      configJson: row.config_json,
      createdAt: now,
      createdBy: options.rotatedBy ?? 'secret-rotation',
    });
    return {
      endpointId,
      secret,
      secretLast4: secret.slice(-4),
      configVersion: version,
      previousSecretExpiresAt: expiresAt,
    };
  });
}

/** Secrets that verify right now: the current one, then the previous one inside its overlap. */
/** The current secret (no expiry) and, while its overlap lasts, the previous one with its expiry. */
export function decryptedSecrets(
  services: Pick<Services, 'secrets'>,
  row: EndpointRow,
): { value: string; expiresAt: number | null }[] {
  const out: { value: string; expiresAt: number | null }[] = [];
  if (row.secret_enc) out.push({ value: services.secrets.decrypt(row.secret_enc), expiresAt: null });
  if (row.previous_secret_enc && row.previous_secret_expires_at !== null) {
    out.push({ value: services.secrets.decrypt(row.previous_secret_enc), expiresAt: row.previous_secret_expires_at });
  }
  return out;
}

/** Sets the endpoint status (pause/resume/archive), recording archived_at. */
export async function setEndpointStatus(
  services: Pick<Services, 'db' | 'now'>,
  endpointId: string,
  status: EndpointStatus,
): Promise<void> {
  const now = services.now();
  await updateEndpointStatus(services.db, endpointId, status, now, status === 'archived' ? now : null);
}

/**
 * Replaces an endpoint's secret with one the sender made (Stripe shows it only once it has the
 * ingest URL), keeping the previous one verifying for `overlapHours`, and audits it, in one
 * transaction. The secret itself is never audited (its last 4 characters are).
 */
export async function importEndpointSecret(
  services: Services,
  row: Pick<EndpointRow, 'id' | 'shop_id' | 'auth_mode'>,
  secret: string,
  overlapHours: number,
  actor: AuditActor,
) {
  return services.db.tx(async (tx) => {
    const r = await rotateEndpointSecret({ ...services, db: tx }, row.id, overlapHours, {
      newSecret: secret,
      rotatedBy: 'operator-cli',
    });
    await appendAudit(tx, {
      shopId: row.shop_id,
      actor,
      action: 'endpoint.secret_import',
      targetType: 'endpoint',
      targetId: row.id,
      outcome: 'success',
      at: services.now(),
      details: {
        auth_mode: row.auth_mode,
        secret_last4: r.secretLast4,
        config_version: r.configVersion,
        overlap_hours: overlapHours,
      },
    });
    return r;
  });
}

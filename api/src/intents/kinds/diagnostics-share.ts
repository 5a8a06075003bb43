// Diagnostics share: freezes a redacted bundle (endpoint snapshots without
// secrets, recent receipt facts, support codes, readiness checks) behind an
// unguessable, expiring link support can open without a grant. Only the
// token's hash is stored; the link is shown once, in the confirmation response.
import { joinUrl } from '../../docs-paths.ts';
import { newId } from '../../ids.ts';
import { problemEventsOf } from '../../reads/diagnostics-share.ts';
import { recentShopReceipts } from '../../reads/receipts.ts';
import { receiptFailure } from '../../errors/auth-failure.ts';
import { readinessChecks } from '../../reads/readiness.ts';
import { randomToken, sha256Hex } from '../../lib/crypto.ts';
import { type EndpointRow, listLiveShopEndpoints } from '../../store/tables/endpoints.ts';
import {
  findDiagnosticsShareByTokenHash,
  insertDiagnosticsShare,
  type SharedDiagnosticsRow,
} from '../../store/tables/intents.ts';
import type { Services } from '../../core/types.ts';
import type { IntentCost, IntentKindDef, KindContext } from '../types.ts';
import { assertCapAvailable } from '../usage.ts';
import { endpointSnapshot, iso, loadEndpoint } from './common.ts';

export interface DiagnosticsShareParams {
  endpoint_id?: string | null;
  expires_in_hours?: number;
  receipt_limit?: number;
}

export const SHARED_DIAGNOSTICS_PATH = '/shared/diagnostics';
export const DEFAULT_SHARE_HOURS = 72;
export const MAX_SHARE_HOURS = 168;
export const DEFAULT_RECEIPT_LIMIT = 50;

export const SHARE_INCLUDED = [
  'Shop domain, plan and Shopify connection status',
  'Endpoint configuration snapshots (name, sender label, trigger variant, auth mode and its non-secret parameters, mapping, status, config version)',
  'The last 4 characters of each endpoint secret (never the secret)',
  'Recent receipt facts: time, auth result, validation result, dedupe decision, config version, HTTP status, error and support codes, body size, and for a refused request which check failed (never the secret, signature or body)',
  'Failed, no-workflow and held events: ids, states, error and support codes, attempt counts',
  'Readiness checks (shop connection, endpoint status, trigger handles, recent delivery outcomes)',
] as const;

export const SHARE_EXCLUDED = [
  'Event payload bodies and any customer data inside them',
  'Endpoint signing secrets, previous secrets and Basic passwords',
  'Grant tokens and the Shopify Admin API access token',
  'Raw sender request headers (including signatures)',
  'Flow response bodies beyond error text',
  'The audit log',
] as const;

function scopeEndpoints(kc: KindContext, endpointId: string | null | undefined): Promise<EndpointRow[]> {
  if (endpointId) return loadEndpoint(kc, endpointId, { allowArchived: true }).then((e) => [e]);
  return listLiveShopEndpoints(kc.db, kc.shop.id);
}

/** A share counts one diagnostics share and one execution when confirmed. */
const SHARE_COST = { execution: 1, diagnostics_shares: 1 } as const satisfies IntentCost;

export const diagnosticsShareKind: IntentKindDef<DiagnosticsShareParams> = {
  kind: 'diagnostics_share',
  label: 'diagnostics share',
  async inspect(kc, _target, params) {
    const endpoints = await scopeEndpoints(kc, params.endpoint_id);
    const cap = await assertCapAvailable(kc.db, kc.shop.id, 'diagnostics_shares', kc.now);
    const hours = params.expires_in_hours ?? DEFAULT_SHARE_HOURS;
    const receiptLimit = params.receipt_limit ?? DEFAULT_RECEIPT_LIMIT;
    const endpointIds = endpoints.map((e) => e.id);
    return {
      targetType: params.endpoint_id ? 'endpoint' : 'shop',
      targetId: params.endpoint_id ?? kc.shop.id,
      cap,
      cost: SHARE_COST,
      fingerprint: endpoints.map((e) => [e.id, e.status, Number(e.config_version)]),
      preview: {
        summary: `Freeze a redacted diagnostics bundle for ${params.endpoint_id ? `endpoint ${params.endpoint_id}` : `all ${endpoints.length} endpoint(s) of ${kc.shop.domain}`} behind a link that expires ${hours} h after confirmation.`,
        target: { shop_domain: kc.shop.domain, endpoint_ids: endpointIds },
        current_config: null,
        effects: [
          'Builds the bundle at confirmation time and freezes it: later changes do not alter what the link shows.',
          `Creates an unguessable link under ${SHARED_DIAGNOSTICS_PATH}/ readable by anyone who has it, without a grant, as HTML or JSON, for ${hours} hours.`,
          'The link is shown once, in the confirmation response; Flowport stores only its hash.',
          `Counts ${SHARE_COST.diagnostics_shares} diagnostics share and ${SHARE_COST.execution} execution against the monthly plan.`,
        ],
        warnings: [
          'Anyone with the link can read the bundle until it expires. Share it only with the support team that needs it.',
        ],
        details: {
          included: [...SHARE_INCLUDED],
          excluded: [...SHARE_EXCLUDED],
          endpoint_ids: endpointIds,
          receipt_limit: receiptLimit,
          expires_in_hours: hours,
        },
      },
    };
  },

  async execute(kc, _intent, params) {
    const endpoints = await scopeEndpoints(kc, params.endpoint_id);
    const ids = endpoints.map((e) => e.id);
    const hours = params.expires_in_hours ?? DEFAULT_SHARE_HOURS;
    const receiptLimit = params.receipt_limit ?? DEFAULT_RECEIPT_LIMIT;
    const receipts = (await recentShopReceipts(kc.db, kc.shop.id, { endpointIds: ids, limit: receiptLimit })).map(
      ({ request_id: _request, shop_id: _shop, body_sha256: _hash, failure, ...r }) => ({
        ...r,
        failure: receiptFailure(failure, r.error_code),
      }),
    );
    const problems = await problemEventsOf(kc.db, kc.shop.id, ids);
    const supportCodes = [
      ...new Set(
        [...receipts.map((r) => r.support_code), ...problems.map((p) => p.support_code)].filter(
          (c): c is string => typeof c === 'string',
        ),
      ),
    ].sort();
    // The same checks get_setup and get_diagnostics show (one derivation), frozen with the bundle.
    const readiness = await readinessChecks(
      kc.db,
      kc.shop.id,
      kc.services.config.publicUrl,
      kc.now,
      params.endpoint_id ?? undefined,
    );
    const token = randomToken(32);
    const shareId = newId('diagnostics', kc.now);
    const expiresAt = kc.now + hours * 3_600_000;
    const bundle = {
      share_id: shareId,
      shop: {
        domain: kc.shop.domain,
        plan: kc.shop.plan,
        connection_status: kc.shop.connection_status,
        sandbox: Boolean(kc.shop.sandbox),
      },
      generated_at: iso(kc.now),
      expires_at: iso(expiresAt),
      endpoints: endpoints.map((e) => endpointSnapshot(e, kc.now)),
      receipts: receipts.map((r) => ({
        ...r,
        received_at: iso(r.received_at as number),
        config_version: Number(r.config_version),
      })),
      problem_events: problems.map((p) => ({
        ...p,
        received_at: iso(p.received_at as number),
        is_test: Boolean(p.is_test),
      })),
      support_codes: supportCodes,
      readiness,
      included: [...SHARE_INCLUDED],
      excluded: [...SHARE_EXCLUDED],
    };
    await insertDiagnosticsShare(kc.db, {
      id: shareId,
      shopId: kc.shop.id,
      tokenHash: sha256Hex(token),
      bundleJson: JSON.stringify(bundle),
      now: kc.now,
      expiresAt,
    });
    const url = joinUrl(kc.services.config.publicUrl, `${SHARED_DIAGNOSTICS_PATH}/${token}`);
    return {
      result: {
        share_id: shareId,
        expires_at: iso(expiresAt),
        receipts: receipts.length,
        endpoints: ids.length,
        share_url_shown_once: true,
      },
      once: { share_url: url, share_url_json: `${url}.json` },
    };
  },
};

/** The share behind a link's token, looked up by the token's SHA-256 only (expired or revoked ones too). */
export async function findDiagnosticsShare(
  services: Pick<Services, 'db'>,
  token: string,
): Promise<SharedDiagnosticsRow | undefined> {
  return findDiagnosticsShareByTokenHash(services.db, sha256Hex(token));
}

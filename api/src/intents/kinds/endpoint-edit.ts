// Endpoint edit: the preview shows a field-by-field diff and what it means for
// events already queued; confirmation writes a new config version.
import { AppError } from '../../errors/problem.ts';
import { TRIGGER_HANDLES } from '../../handoff/payload.ts';
import {
  buildEndpointConfig,
  configFromSnake,
  configToSnake,
  type EndpointConfig,
  endpointConfig,
  storedConfigJson,
  type EndpointMapping,
  type HmacParams,
} from '../../services/endpoints.ts';
import {
  type EndpointRow,
  insertEndpointVersion,
  type TriggerVariant,
  updateEndpointConfig,
} from '../../store/tables/endpoints.ts';
import { countEndpointEventsInFlight } from '../../store/tables/events/intents.ts';
import type { IntentKindDef, KindContext } from '../types.ts';
import { endpointSnapshot, jsonDiff, loadEndpoint } from './common.ts';

/** The request body as the API spells it (snake_case, nested `hmac` and `mapping` too). */
export interface EndpointEditParams {
  name?: string;
  sender_label?: string;
  trigger_variant?: TriggerVariant;
  hmac?: Record<string, unknown>;
  tolerance_sec?: number;
  dedupe_window_hours?: number;
  mapping?: Record<string, unknown>;
  status?: 'active' | 'paused';
}

function nextConfig(row: EndpointRow, params: EndpointEditParams): EndpointConfig {
  const cur = endpointConfig(row);
  const p = {
    ...params,
    hmac: params.hmac ? configFromSnake<Partial<HmacParams>>(params.hmac) : undefined,
    mapping: params.mapping ? configFromSnake<Partial<EndpointMapping>>(params.mapping) : undefined,
  };
  return buildEndpointConfig({
    shopId: row.shop_id,
    name: p.name ?? cur.name,
    senderLabel: p.sender_label ?? cur.senderLabel,
    triggerVariant: p.trigger_variant ?? cur.triggerVariant,
    authMode: cur.authMode,
    hmac: cur.hmac || p.hmac ? { ...cur.hmac, ...p.hmac } : undefined,
    staticHeader: cur.staticHeader,
    basic: cur.basic,
    toleranceSec: p.tolerance_sec ?? cur.toleranceSec ?? cur.hmac?.toleranceSec,
    dedupeWindowHours: p.dedupe_window_hours ?? cur.dedupeWindowHours,
    mapping: { ...cur.mapping, ...p.mapping },
  });
}

async function plan(kc: KindContext, endpointId: string | null, p: EndpointEditParams) {
  const row = await loadEndpoint(kc, endpointId);
  const before = endpointConfig(row);
  const after = nextConfig(row, p);
  // The diff names fields as the API does.
  const diff = jsonDiff(configToSnake(before), configToSnake(after));
  const status = p.status ?? row.status;
  if (status !== row.status) diff.push({ path: 'status', before: row.status, after: status });
  return { row, before, after, diff, status };
}

export const endpointEditKind: IntentKindDef<EndpointEditParams> = {
  kind: 'endpoint_edit',
  label: 'endpoint edit',
  async inspect(kc, endpointId, params) {
    const { row, after, diff, status } = await plan(kc, endpointId, params);
    if (diff.length === 0) {
      throw new AppError('invalid_request', {
        detail: 'The requested edit changes nothing: every field already has that value.',
        errors: [{ path: '(root)', message: 'no changes' }],
      });
    }
    const inFlight = await countEndpointEventsInFlight(kc.db, row.id);
    const changed = new Set(diff.map((d) => d.path.split('.')[0]));
    const queuedEffects: string[] = [];
    if (changed.has('triggerVariant')) {
      queuedEffects.push(
        `${inFlight} queued or in-flight event(s) will be handed to the new trigger "${TRIGGER_HANDLES[after.triggerVariant]}" instead of "${TRIGGER_HANDLES[row.trigger_variant]}".`,
      );
    }
    if (changed.has('mapping') || changed.has('hmac') || changed.has('toleranceSec')) {
      queuedEffects.push(
        'Mapping and verification changes apply to events received after confirmation; queued events keep what was extracted at intake.',
      );
    }
    if (status === 'paused')
      queuedEffects.push('While paused, intake refuses new events from the sender; queued events are still delivered.');
    if (queuedEffects.length === 0) queuedEffects.push(`No effect on the ${inFlight} queued or in-flight event(s).`);
    const warnings: string[] = [];
    if (changed.has('hmac') || changed.has('toleranceSec'))
      warnings.push(
        'Verification settings change: make sure the sender signs the way the new settings expect, or its events will be rejected.',
      );
    if (changed.has('triggerVariant'))
      warnings.push('Workflows on the old trigger stop receiving events from this endpoint.');
    return {
      targetType: 'endpoint',
      targetId: row.id,
      fingerprint: { config_version: Number(row.config_version), status: row.status },
      preview: {
        summary: `Change ${diff.length} field(s) of endpoint ${row.id}; configuration version ${row.config_version} → ${Number(row.config_version) + 1}.`,
        target: { endpoint_id: row.id, name: row.name, status: row.status, config_version: Number(row.config_version) },
        current_config: endpointSnapshot(row, kc.now),
        effects: [
          `Writes configuration version ${Number(row.config_version) + 1}; receipts from then on record it.`,
          ...queuedEffects,
          'Counts 1 execution against the monthly plan.',
        ],
        warnings,
        details: {
          diff,
          new_config: configToSnake(after),
          new_status: status,
          queued_or_in_flight_events: inFlight,
          effect_on_queued_events: queuedEffects,
        },
      },
    };
  },

  async execute(kc, intent, params) {
    const { row, after, status } = await plan(kc, intent.target_id, params);
    const version = Number(row.config_version) + 1;
    const json = storedConfigJson(after);
    await updateEndpointConfig(kc.db, {
      id: row.id,
      name: after.name,
      senderLabel: after.senderLabel,
      triggerVariant: after.triggerVariant,
      configJson: json,
      configVersion: version,
      status,
      now: kc.now,
    });
    await insertEndpointVersion(kc.db, {
      endpointId: row.id,
      version,
      configJson: json,
      createdAt: kc.now,
      createdBy: intent.id,
    });
    return {
      result: {
        endpoint_id: row.id,
        config_version: version,
        status,
        links: { endpoint: `/agent/v1/endpoints/${row.id}` },
      },
    };
  },
};

// Endpoint delete, in two steps: `archive` (stops intake, keeps everything) and
// `permanent` (only from archived: clears config and secrets, purges retained
// bodies; a tombstone with id, name and timestamps remains, events and receipts
// keep their metadata). The preview counts what will be lost.
import { AppError } from '../../errors/problem.ts';
import { countEndpointReceipts } from '../../reads/receipts.ts';
import type { IntentKindDef, KindContext } from '../types.ts';
import { archiveEndpoint, tombstoneEndpoint } from '../../store/tables/endpoints.ts';
import {
  countEndpointEvents,
  countEndpointEventsInFlight,
  countEndpointRetainedBodies,
  purgeEndpointBodies,
} from '../../store/tables/events/intents.ts';
import { endpointSnapshot, iso, loadEndpoint } from './common.ts';

export interface EndpointDeleteParams {
  mode: 'archive' | 'permanent';
}

async function counts(kc: KindContext, endpointId: string) {
  const [events, retained, inFlight, receipts] = await Promise.all([
    countEndpointEvents(kc.db, endpointId),
    countEndpointRetainedBodies(kc.db, endpointId),
    countEndpointEventsInFlight(kc.db, endpointId),
    countEndpointReceipts(kc.db, endpointId),
  ]);
  return { events, retained_bodies: retained, queued_or_in_flight: inFlight, receipts };
}

export const endpointDeleteKind: IntentKindDef<EndpointDeleteParams> = {
  kind: 'endpoint_delete',
  label: 'endpoint delete',
  async inspect(kc, endpointId, params) {
    const row = await loadEndpoint(kc, endpointId, { allowArchived: params.mode === 'permanent' });
    const c = await counts(kc, row.id);
    if (params.mode === 'permanent' && row.status !== 'archived') {
      throw new AppError('endpoint_not_archived', {
        detail: `Endpoint ${row.id} is ${row.status}. Archive it first (mode "archive"), then delete it permanently.`,
        reason: 'Permanent delete is only possible from archived.',
      });
    }
    if (params.mode === 'permanent' && c.queued_or_in_flight > 0) {
      throw new AppError('event_in_flight', {
        detail: `${c.queued_or_in_flight} event(s) of endpoint ${row.id} are still queued or being delivered; permanent delete would purge their bodies. Wait until they finish.`,
        reason: 'Events are still in flight.',
      });
    }
    const archive = params.mode === 'archive';
    return {
      targetType: 'endpoint',
      targetId: row.id,
      // What the confirmation would act on. Receipts are kept and keep arriving while a sender retries
      // against the archived endpoint, so their count is shown but is not part of the fingerprint.
      fingerprint: archive
        ? { status: row.status, config_version: Number(row.config_version) }
        : {
            status: row.status,
            config_version: Number(row.config_version),
            events: c.events,
            retained_bodies: c.retained_bodies,
            queued_or_in_flight: c.queued_or_in_flight,
          },
      preview: {
        summary: archive
          ? `Archive endpoint ${row.id} ("${row.name}"): intake stops accepting its events; nothing is deleted.`
          : `Permanently delete archived endpoint ${row.id} ("${row.name}"): secrets and ${c.retained_bodies} retained payload bod(ies) are destroyed; a tombstone remains.`,
        target: { endpoint_id: row.id, name: row.name, status: row.status, archived_at: iso(row.archived_at) },
        current_config: endpointSnapshot(row, kc.now),
        effects: archive
          ? [
              'Sets the endpoint status to archived: the sender’s new requests are refused.',
              `${c.queued_or_in_flight} queued or in-flight event(s) are still delivered.`,
              'Events, receipts, bodies and secrets are kept; the endpoint can then be permanently deleted.',
              'Counts 1 execution against the monthly plan.',
            ]
          : [
              'Clears the signing secret, any previous secret and the configuration (cannot be undone).',
              `Purges ${c.retained_bodies} retained payload bod(ies); those events can no longer be replayed.`,
              `Keeps a tombstone (id, name, timestamps) and the metadata of ${c.events} event(s) and ${c.receipts} receipt(s) for audit.`,
              'Counts 1 execution against the monthly plan.',
            ],
        warnings: archive
          ? ['The sender will get errors for new events; pause or remove the webhook at the sender too.']
          : ['Permanent: the secret and payload bodies cannot be recovered.'],
        details: {
          mode: params.mode,
          will_be_lost: archive
            ? {}
            : { secrets: row.secret_last4 ? 1 : 0, retained_bodies: c.retained_bodies, configuration: true },
          counts: c,
        },
      },
    };
  },

  async execute(kc, intent, params) {
    const id = String(intent.target_id);
    if (params.mode === 'archive') {
      await archiveEndpoint(kc.db, id, kc.now);
      return { result: { endpoint_id: id, status: 'archived', archived_at: iso(kc.now) } };
    }
    const purged = await purgeEndpointBodies(kc.db, id, kc.now);
    await tombstoneEndpoint(kc.db, id, kc.now);
    return {
      result: {
        endpoint_id: id,
        status: 'deleted',
        deleted_at: iso(kc.now),
        purged_bodies: purged,
        tombstone: true,
      },
    };
  },
};

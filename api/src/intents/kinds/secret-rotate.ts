// Secret rotation: the preview shows the overlap window during which the old
// secret keeps verifying; confirmation returns the new secret once.
import { MAX_ROTATION_OVERLAP_HOURS, rotateEndpointSecret } from '../../services/endpoints.ts';
import type { IntentKindDef } from '../types.ts';
import { endpointSnapshot, iso, loadEndpoint } from './common.ts';

export interface SecretRotateParams {
  overlap_hours?: number;
}

export const DEFAULT_OVERLAP_HOURS = 24;

export const secretRotateKind: IntentKindDef<SecretRotateParams> = {
  kind: 'secret_rotate',
  label: 'secret rotation',
  async inspect(kc, endpointId, params) {
    const row = await loadEndpoint(kc, endpointId);
    const overlap = params.overlap_hours ?? DEFAULT_OVERLAP_HOURS;
    const warnings: string[] = [];
    if (overlap === 0)
      warnings.push(
        'Overlap 0: requests signed with the current secret are rejected the moment you confirm. Update the sender first.',
      );
    if (row.previous_secret_expires_at !== null && Number(row.previous_secret_expires_at) > kc.now) {
      warnings.push(
        `An earlier rotation's previous secret is still valid until ${iso(row.previous_secret_expires_at)}; it stops verifying when you confirm (only one previous secret is kept).`,
      );
    }
    return {
      targetType: 'endpoint',
      targetId: row.id,
      fingerprint: { config_version: Number(row.config_version), status: row.status, secret_last4: row.secret_last4 },
      preview: {
        summary: `Rotate the ${row.auth_mode} secret of endpoint ${row.id}; the current secret keeps verifying for ${overlap} h.`,
        target: { endpoint_id: row.id, name: row.name, auth_mode: row.auth_mode, secret_last4: row.secret_last4 },
        current_config: endpointSnapshot(row, kc.now),
        effects: [
          `Generates a new ${row.auth_mode} secret, shown once in the confirmation response.`,
          overlap > 0
            ? `The current secret (…${row.secret_last4 ?? '????'}) keeps verifying for ${overlap} h after confirmation, then stops.`
            : `The current secret (…${row.secret_last4 ?? '????'}) stops verifying immediately.`,
          `Writes configuration version ${Number(row.config_version) + 1}.`,
          'Counts 1 execution against the monthly plan.',
        ],
        warnings,
        details: {
          overlap_hours: overlap,
          max_overlap_hours: MAX_ROTATION_OVERLAP_HOURS,
          previous_secret_valid_until: overlap > 0 ? `confirmation time + ${overlap} h` : null,
          sender_action: 'Put the new secret into the sender (its webhook settings) within the overlap window.',
        },
      },
    };
  },

  async execute(kc, intent, params) {
    const rotated = await rotateEndpointSecret(
      { db: kc.db, secrets: kc.services.secrets, now: () => kc.now },
      String(intent.target_id),
      params.overlap_hours ?? DEFAULT_OVERLAP_HOURS,
      { rotatedBy: intent.id },
    );
    return {
      result: {
        endpoint_id: rotated.endpointId,
        secret_last4: rotated.secretLast4,
        config_version: rotated.configVersion,
        previous_secret_valid_until: iso(rotated.previousSecretExpiresAt),
        secret_shown_once: true,
      },
      once: { secret: rotated.secret },
    };
  },
};

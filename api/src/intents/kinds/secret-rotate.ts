// Secret rotation: the preview shows the overlap window during which the old
// secret keeps verifying, warns when recent refusals say a new secret would not help, and says
// who gets the new secret; confirmation returns the new secret once.
import { rejectedIntakeCounts } from '../../reads/receipts.ts';
import { MAX_ROTATION_OVERLAP_HOURS, rotateEndpointSecret } from '../../services/endpoints.ts';
import type { IntentKindDef } from '../types.ts';
import { endpointSnapshot, iso, loadEndpoint } from './common.ts';

export interface SecretRotateParams {
  overlap_hours?: number;
}

export const DEFAULT_OVERLAP_HOURS = 24;

/** How far back a rotation preview looks at the endpoint's refused requests. */
const REFUSAL_WINDOW_HOURS = 24;

/** Said on every rotation preview: the one moment the secret can be read, and by whom. */
export const SECRET_SHOWN_ONCE_WARNING =
  'The new secret is shown once, in the confirmation response, to whoever confirms this intent (a grant with secret_rotate:execute), and is never readable again. If an agent confirms, the agent holds the secret and must pass it to whoever configures the sender; if the merchant should hold it, let the merchant confirm.';

export const secretRotateKind: IntentKindDef<SecretRotateParams> = {
  kind: 'secret_rotate',
  label: 'secret rotation',
  async inspect(kc, endpointId, params) {
    const row = await loadEndpoint(kc, endpointId);
    const overlap = params.overlap_hours ?? DEFAULT_OVERLAP_HOURS;
    const warnings: string[] = [SECRET_SHOWN_ONCE_WARNING];
    // Refusals a new secret does not cure: the sender signs other bytes, or with another secret.
    const refused = await rejectedIntakeCounts(kc.db, kc.shop.id, kc.now - REFUSAL_WINDOW_HOURS * 3_600_000, row.id);
    const mismatches = refused.signature_mismatch ?? 0;
    if (mismatches > 0)
      warnings.push(
        `${mismatches} request(s) to this endpoint in the last ${REFUSAL_WINDOW_HOURS} h were refused with signature_mismatch: the sender signs other bytes than it sends (e.g. JSON re-serialised after signing, or a different body encoding) or uses another secret than this endpoint's. A rotation fixes neither: check the sender's signing (its receipts, and the signature_mismatch docs page) first, or the sender will be refused with the new secret too.`,
      );
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
          recent_refusals: { window_hours: REFUSAL_WINDOW_HOURS, signature_mismatch: mismatches },
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

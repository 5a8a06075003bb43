import { ASK_FOR_A_GRANT, WHO_CREATES_GRANTS } from '../../entry-points.ts';
import type { ErrorDef } from '../catalog.ts';

// Grant authentication and scope errors (the `authority` layer).
export const AUTH_ERRORS = {
  missing_token: {
    steps: [{ kind: 'merchant_page', description: `${ASK_FOR_A_GRANT}.` }],
    status: 401,
    title: 'No grant token',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description:
      'This operation needs a merchant-authorized grant, and the request carried no `Authorization: Bearer` header.',
    fix: `Send \`Authorization: Bearer <GRANT_TOKEN>\`. ${WHO_CREATES_GRANTS} ${ASK_FOR_A_GRANT}.`,
  },
  invalid_token: {
    steps: [
      {
        kind: 'merchant_page',
        description: `If the token was lost: ${ASK_FOR_A_GRANT.charAt(0).toLowerCase()}${ASK_FOR_A_GRANT.slice(1)}.`,
      },
    ],
    status: 401,
    title: 'Grant token not recognised',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description: 'The bearer token is malformed, has a bad checksum, or matches no grant.',
    fix: 'Check that the whole token was copied (it starts with `fpg_`). If it was lost, ask the merchant to create a new grant.',
  },
  grant_expired: {
    steps: [{ kind: 'merchant_page', description: `${ASK_FOR_A_GRANT} (grants cannot be extended).` }],
    status: 401,
    title: 'Grant expired',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description: 'The grant behind this token has passed its expiry time. Grants last at most 90 days.',
    fix: `${ASK_FOR_A_GRANT}: a new grant replaces an expired one (none can be extended).`,
  },
  grant_revoked: {
    steps: [
      {
        kind: 'merchant_page',
        description: 'Ask the merchant whether a new grant is appropriate; only they create one, on the merchant page.',
      },
    ],
    status: 401,
    title: 'Grant revoked',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description: 'A human revoked the grant behind this token.',
    fix: 'Stop using this token. Ask the merchant whether a new grant is appropriate.',
  },
  missing_scope: {
    steps: [
      { kind: 'call', operation: 'getGrant', description: 'Read your grant: its tier and scopes.' },
      { kind: 'merchant_page', description: `${ASK_FOR_A_GRANT}: one whose tier has the scope this call needs.` },
    ],
    status: 403,
    title: 'Scope not granted',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description:
      'The grant is valid but does not include the scope this operation requires. The refusal names the `required_scope`.',
    fix: 'Use an operation your grant allows (see `GET /agent/v1/grant`), or ask the merchant for a grant with the required scope. Agents cannot widen their own grants.',
  },
} as const satisfies Record<string, ErrorDef>;

import type { ErrorDef } from '../catalog.ts';

// Grant authentication and scope errors (the `authority` layer).
export const AUTH_ERRORS = {
  missing_token: {
    status: 401,
    title: 'No grant token',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description:
      'This operation needs a merchant-authorized grant, and the request carried no `Authorization: Bearer` header.',
    fix: 'Send `Authorization: Bearer <GRANT_TOKEN>`. Only a human can create a grant, with `flowport grants create`; ask the merchant for one.',
  },
  invalid_token: {
    status: 401,
    title: 'Grant token not recognised',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description: 'The bearer token is malformed, has a bad checksum, or matches no grant.',
    fix: 'Check that the whole token was copied (it starts with `fpg_`). If it was lost, ask the merchant to create a new grant.',
  },
  grant_expired: {
    status: 401,
    title: 'Grant expired',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description: 'The grant behind this token has passed its expiry time. Grants last at most 90 days.',
    fix: 'Ask the merchant to create a new grant with `flowport grants create`.',
  },
  grant_revoked: {
    status: 401,
    title: 'Grant revoked',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description: 'A human revoked the grant behind this token.',
    fix: 'Stop using this token. Ask the merchant whether a new grant is appropriate.',
  },
  missing_scope: {
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

import type { ErrorDef } from '../catalog.ts';

// Flowport as the OAuth authorization server for agents (ADR 1400). The OAuth endpoints answer
// clients in RFC 6749 / 7591 JSON (`error`, `error_description`, plus `flowport_code` and
// `docs_url`); these codes name the refusals a person or an agent may need to read about, and the
// page the consent screen shows when it cannot safely send the error back to the client.
export const OAUTH_ERRORS = {
  oauth_invalid_client: {
    status: 400,
    title: 'Unknown or invalid OAuth client',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description:
      'The authorization request names a `client_id` Flowport does not know: it was never registered (RFC 7591 dynamic registration), or it is a Client ID Metadata Document URL that could not be fetched, was too large, too slow, not JSON, or does not name itself as its `client_id`. Flowport does not redirect anywhere for an unknown client, so nothing is sent to an address it cannot trust.',
    fix: "Reconnect from the MCP client so it registers again (a dynamically registered client no merchant approved within a day expires), or check that the client's metadata document is served over https and lists its `redirect_uris`. See the MCP setup page.",
  },
  oauth_invalid_redirect_uri: {
    status: 400,
    title: 'Redirect URI not registered',
    layer: 'safety',
    retry: 'no',
    area: 'auth',
    description:
      'The `redirect_uri` is not exactly one the client registered, or is neither https nor loopback http. Only the port of a loopback IP literal (`http://127.0.0.1:<port>/…`, `http://[::1]:<port>/…`) may differ from the registered one (RFC 8252 §7.3); `localhost` is matched exactly, port included. Flowport never redirects to an address the client did not register (no open redirect), so it shows this page instead.',
    fix: 'Use a redirect URI the client registered, character for character. Native clients should register `http://127.0.0.1/…` (or `http://[::1]/…`) and may then listen on any port; with `http://localhost:<port>/…` the port must be the registered one. Everything else uses https.',
  },
  oauth_invalid_request: {
    status: 400,
    title: 'Invalid OAuth request',
    retry: 'no',
    area: 'auth',
    description:
      "An OAuth request (registration, authorization, token or revocation) is missing a required parameter or has one Flowport does not accept: only the authorization code grant with PKCE `S256`, a `resource` that is one of Flowport's own (RFC 8707), and tier or scope names Flowport defines. The `error_description` says which.",
    fix: 'Use an MCP client with OAuth support (it discovers everything from `/.well-known/oauth-authorization-server`), or follow the OAuth reference page.',
  },
  oauth_invalid_grant: {
    status: 400,
    title: 'Authorization code or refresh token refused',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description:
      'The token endpoint refused a code or refresh token: it is unknown, expired or already used, was issued to another client, the `redirect_uri` or `resource` differs from the authorization request, or the PKCE `code_verifier` does not match. A code or refresh token works once, even when requests race: of simultaneous redemptions exactly one succeeds. Presenting a code again revokes the tokens it was exchanged for; reusing a refresh token that was already rotated revokes every token of that authorization (the family). Both are audited, since they mean a code or token may have leaked.',
    fix: 'Start the authorization again from the MCP client; the merchant approves once more. Send one refresh at a time and keep only the newest refresh token.',
  },
  oauth_consent_expired: {
    status: 403,
    title: 'Consent request expired',
    layer: 'safety',
    retry: 'no',
    area: 'auth',
    description:
      'The consent form was submitted after its request expired (10 minutes), was already answered, or belongs to another sign-in. No grant was created.',
    fix: 'Start the connection again from the MCP client; it opens a fresh consent page.',
  },
  oauth_shop_not_signed_in: {
    status: 403,
    title: 'Not signed in to that store',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description:
      'The consent form named a store this browser is not signed in to. The consent page lists only the stores the merchant signed in to through Shopify in this browser, and the grant can be made only for one of them. No grant was created, and the consent request is still open.',
    fix: 'Choose one of the stores listed on the consent page, or use "Sign in to another store" there: sign in to that store through Shopify and you come back to the consent page with it listed.',
  },
  oauth_registration_rate_limited: {
    status: 429,
    title: 'Too many client registrations',
    layer: 'usage',
    retry: 'client',
    area: 'auth',
    description:
      "Dynamic client registration is limited to 20 per client address per clock hour, so the client table cannot be flooded; an IPv6 client counts on its /64 network, as one subscriber usually holds a whole /64. The address is the connection's, or behind a reverse proxy listed in `FLOWPORT_TRUSTED_PROXIES` the one its `X-Forwarded-For` names. Registering once per client installation is enough.",
    fix: 'Reuse the `client_id` from the earlier registration, or wait for the next hour. Operators behind a proxy: list it in `FLOWPORT_TRUSTED_PROXIES` so clients are not all counted as the proxy.',
  },
  oauth_registration_cap_reached: {
    status: 429,
    title: 'Client registrations closed for this hour',
    layer: 'usage',
    retry: 'client',
    area: 'auth',
    description:
      'This Flowport accepts a limited number of dynamic client registrations per clock hour from all addresses together (`FLOWPORT_OAUTH_REGISTRATIONS_PER_HOUR`), and that many were made this hour. The cap keeps a flood from many addresses from filling the client table; clients registered but never used expire after a day.',
    fix: 'Reuse the `client_id` from an earlier registration, or register again next hour. Operators: if legitimate clients hit the cap, raise `FLOWPORT_OAUTH_REGISTRATIONS_PER_HOUR`.',
  },
  access_token_expired: {
    status: 401,
    title: 'Access token expired',
    layer: 'authority',
    retry: 'client',
    area: 'auth',
    description:
      'The OAuth access token has passed its one-hour lifetime, or was revoked (on the revocation endpoint, by refresh-token reuse, or with its grant on the merchant page). MCP clients refresh it themselves.',
    fix: 'Use the refresh token at the token endpoint for a new access token. If that is refused too, connect again and let the merchant approve.',
  },
  token_audience_mismatch: {
    status: 401,
    title: 'Token issued for another resource',
    layer: 'authority',
    retry: 'no',
    area: 'auth',
    description:
      'OAuth access tokens are bound to the resource they were issued for (RFC 8707): a token for the Agent Operations API is refused at the MCP endpoint, and the other way round.',
    fix: 'Request a token with `resource` set to the URL you call (`…/agent/v1/mcp` for MCP, `…/agent/v1` for the HTTP API).',
  },
} as const satisfies Record<string, ErrorDef>;

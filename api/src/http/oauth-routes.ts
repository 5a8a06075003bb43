// Flowport's OAuth authorization server endpoints (ADR 1400), its HTTP side: discovery (RFC 8414),
// registration (RFC 7591), token and revocation (RFC 7009). Each parses, calls the authorization
// server's verb (api/src/oauth/) and answers in OAuth's JSON error shape, with the Flowport code
// and its docs link. The consent screen is a merchant page (shopify/merchant/oauth-consent.ts).
import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Services } from '../core/types.ts';
import { errorDocsPath, joinUrl } from '../docs-paths.ts';
import { isErrorCode } from '../errors/catalog.ts';
import { OAuthProtocolError, registerClient } from '../oauth/clients.ts';
import { authorizationServerMetadata, OAUTH_PATHS } from '../oauth/metadata.ts';
import { exchangeCode, refreshTokens, revokeToken } from '../oauth/tokens.ts';
import { clientAddress } from './client-address.ts';
import type { AppEnv } from './types.ts';
import { formOf, formText as str } from './form.ts';

function oauthJsonError(c: Context<AppEnv>, services: Services, err: OAuthProtocolError): Response {
  const flowportCode = `oauth_${err.error}`;
  const code = isErrorCode(err.error) ? err.error : isErrorCode(flowportCode) ? flowportCode : 'oauth_invalid_request';
  c.header('Cache-Control', 'no-store');
  if (err.status === 429) c.header('Retry-After', String(err.retryAfterS ?? 3600));
  return c.json(
    {
      error: err.error.startsWith('oauth_registration_') ? 'invalid_request' : err.error,
      error_description: err.message,
      flowport_code: code,
      docs_url: joinUrl(services.config.publicUrl, errorDocsPath(code)),
    },
    err.status as 400,
  );
}

/** Browser-based MCP clients call these cross-origin; none of them uses cookies, so any origin may. */
function allowAnyOrigin(app: Hono<AppEnv>): void {
  for (const path of [
    OAUTH_PATHS.register,
    OAUTH_PATHS.token,
    OAUTH_PATHS.revoke,
    OAUTH_PATHS.authorizationServerMetadata,
  ])
    app.use(path, async (c, next) => {
      if (c.req.method === 'OPTIONS') {
        c.header('Access-Control-Allow-Origin', '*');
        c.header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        c.header('Access-Control-Allow-Headers', 'Content-Type, Authorization, MCP-Protocol-Version');
        c.header('Access-Control-Max-Age', '600');
        return c.body(null, 204);
      }
      await next();
      c.header('Access-Control-Allow-Origin', '*');
    });
}

/** POST /oauth/register: RFC 7591 registration of a public client. */
async function register(c: Context<AppEnv>, services: Services): Promise<Response> {
  c.header('Access-Control-Allow-Origin', '*');
  let body: unknown;
  try {
    const text = await c.req.text();
    if (text.length > 16_384)
      throw new OAuthProtocolError('invalid_client_metadata', 'The registration body is larger than 16 KiB.');
    body = JSON.parse(text);
  } catch (err) {
    if (err instanceof OAuthProtocolError) return oauthJsonError(c, services, err);
    return oauthJsonError(
      c,
      services,
      new OAuthProtocolError('invalid_client_metadata', 'The registration body is not JSON.'),
    );
  }
  try {
    const info = await registerClient(services, body, clientAddress(c, services.config));
    c.header('Cache-Control', 'no-store');
    return c.json(info, 201);
  } catch (err) {
    if (err instanceof OAuthProtocolError) return oauthJsonError(c, services, err);
    throw err;
  }
}

/** POST /oauth/token: authorization_code or refresh_token. */
async function token(c: Context<AppEnv>, services: Services): Promise<Response> {
  c.header('Cache-Control', 'no-store');
  const form = await formOf(c);
  try {
    const grantType = str(form.grant_type);
    const clientId = str(form.client_id) ?? '';
    const resource = str(form.resource);
    if (grantType === 'authorization_code') {
      const tokens = await exchangeCode(services, {
        code: str(form.code) ?? '',
        clientId,
        redirectUri: str(form.redirect_uri) ?? '',
        codeVerifier: str(form.code_verifier) ?? '',
        resource,
        requestId: c.get('requestId'),
      });
      return c.json(tokens);
    }
    if (grantType === 'refresh_token') {
      const tokens = await refreshTokens(services, {
        refreshToken: str(form.refresh_token) ?? '',
        clientId,
        resource,
        requestId: c.get('requestId'),
      });
      return c.json(tokens);
    }
    throw new OAuthProtocolError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
  } catch (err) {
    if (err instanceof OAuthProtocolError) return oauthJsonError(c, services, err);
    throw err;
  }
}

export function oauthServerRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  allowAnyOrigin(app);
  app.get(OAUTH_PATHS.authorizationServerMetadata, (c) => {
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(authorizationServerMetadata(getServices().config));
  });
  app.post(OAUTH_PATHS.register, (c) => register(c, getServices()));
  app.post(OAUTH_PATHS.token, (c) => token(c, getServices()));
  app.post(OAUTH_PATHS.revoke, async (c) => {
    const services = getServices();
    const form = await formOf(c);
    const token = str(form.token);
    if (!token) return oauthJsonError(c, services, new OAuthProtocolError('invalid_request', 'token is required.'));
    await revokeToken(services, token);
    c.header('Cache-Control', 'no-store');
    return c.body(null, 200);
  });
  return app;
}

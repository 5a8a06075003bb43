import type { ErrorDef } from '../catalog.ts';

// The Shopify app install and the merchant page (ADR 1200): refusals of an OAuth install or
// sign-in round trip (shown as an HTML page with the code and this page's link), of the merchant
// page's session and forms, and the state of a shop whose app was uninstalled.
const INSTALL_AGAIN =
  'Start the install again from the Shopify admin or from `/shopify/install?shop=<store>.myshopify.com`.';
export const SHOPIFY_ERRORS = {
  shopify_install_not_configured: {
    status: 503,
    title: 'Shopify app not configured',
    retry: 'no',
    area: 'shopify',
    description:
      "The install path needs the Shopify app's client id and client secret, and this Flowport runs outside sandbox mode without them. Nothing was changed.",
    fix: "Set `FLOWPORT_SHOPIFY_CLIENT_ID` and `FLOWPORT_SHOPIFY_CLIENT_SECRET` to the app's client id and secret (Partner Dashboard or Dev Dashboard, the same values as `shopify.app.toml`) and restart.",
  },
  shopify_install_shop_invalid: {
    status: 400,
    title: 'Not a Shopify store domain',
    retry: 'no',
    area: 'shopify',
    description:
      "The `shop` parameter of an install, sign-in or OAuth callback is missing or is not a store's `<name>.myshopify.com` domain (letters, digits and hyphens, then `.myshopify.com`). Flowport sends a merchant to no other host. Nothing was changed.",
    fix: "Use the store's myshopify.com domain, as shown in the Shopify admin under Settings → Domains, e.g. `/shopify/install?shop=example.myshopify.com`.",
  },
  shopify_oauth_hmac_invalid: {
    status: 400,
    title: 'OAuth callback not signed by Shopify',
    retry: 'no',
    area: 'shopify',
    description:
      "The OAuth callback's `hmac` is missing or does not match the HMAC-SHA256 (hex) of its other parameters, sorted and joined `k=v&…`, keyed with the app's client secret. The request did not come from Shopify unaltered. Nothing was changed.",
    fix: `${INSTALL_AGAIN} If every install fails this way, check that \`FLOWPORT_SHOPIFY_CLIENT_SECRET\` is the secret of the app whose client id is \`FLOWPORT_SHOPIFY_CLIENT_ID\`.`,
  },
  shopify_oauth_state_invalid: {
    status: 400,
    title: 'OAuth state missing, reused or expired',
    retry: 'no',
    area: 'shopify',
    description:
      "The OAuth callback's `state` does not match the one this browser was given when the install started (the state cookie is missing or different), was already used once, belongs to another shop, or is more than 10 minutes old. Each install round trip works once, in the browser that started it. Nothing was changed.",
    fix: `${INSTALL_AGAIN} Use the same browser from start to end, and allow its cookies for Flowport.`,
  },
  shopify_oauth_expired: {
    status: 400,
    title: 'OAuth callback too old',
    retry: 'no',
    area: 'shopify',
    description:
      "The OAuth callback's `timestamp` is missing or more than 90 seconds away from this server's clock, so it may be a replay of an old callback. Nothing was changed.",
    fix: `${INSTALL_AGAIN} If it keeps happening, check this server's clock (NTP).`,
  },
  shopify_install_denied: {
    status: 403,
    title: 'Install declined',
    retry: 'no',
    area: 'shopify',
    description:
      "The merchant declined the app's access on Shopify's authorize page (the callback carried `error=access_denied`). Flowport was not installed and nothing was changed.",
    fix: `${INSTALL_AGAIN} and choose Install.`,
  },
  shopify_unreachable: {
    status: 502,
    title: 'Shopify did not complete the install',
    retry: 'client',
    area: 'shopify',
    description:
      "Exchanging the OAuth code for an access token at the store's `/admin/oauth/access_token` failed: the connection failed or timed out, or Shopify refused the code (already used, expired, or issued to another app) or answered something unreadable. No shop was created or changed and no token was stored.",
    fix: `${INSTALL_AGAIN} A code works once and for a few minutes only. If it keeps failing, check that this server can reach the store over HTTPS.`,
  },
  shopify_shop_not_installed: {
    status: 404,
    title: 'App not installed on this store',
    retry: 'no',
    area: 'shopify',
    description:
      'A merchant tried to sign in to a store where the Flowport app is not installed (or was uninstalled). Sign-in needs an installed app. Nothing was changed.',
    fix: 'Install the app first: `/shopify/install?shop=<store>.myshopify.com`. Installing signs you in.',
  },
  shopify_session_token_invalid: {
    status: 401,
    title: 'Shopify session token not valid',
    retry: 'no',
    area: 'shopify',
    description:
      "The Shopify session token (`id_token`, sent in a POST to `/merchant` or as `Authorization: Bearer`) is not an HS256 JWT signed with the app's client secret, is expired or not yet valid, was issued for another app (`aud`), has no `jti`, or names another store (`dest`). No session was created.",
    fix: 'Open Flowport again from the Shopify admin (session tokens last a minute), or sign in on `/merchant`. A link carrying `?id_token=` signs nobody in.',
  },
  shopify_session_token_reused: {
    status: 401,
    title: 'Shopify session token already used',
    retry: 'no',
    area: 'shopify',
    description:
      "The Shopify session token (`id_token`) was already exchanged for a merchant session: each token's `jti` signs a browser in once, so a copied or replayed token cannot open more sessions. A token without a `jti` is refused as not valid. No session was created.",
    fix: 'Open Flowport again from the Shopify admin: App Bridge fetches a fresh session token (`shopify.idToken()`) for each sign-in. Send it in a POST or in the `Authorization: Bearer` header, once.',
  },
  merchant_sign_in_required: {
    status: 401,
    title: 'Sign in to the merchant page',
    retry: 'no',
    area: 'shopify',
    description:
      'The merchant page needs a signed-in merchant: the session cookie is missing, expired, signed out, or was revoked (sessions of a shop end when the app is uninstalled). Nothing was changed.',
    fix: "Sign in on `/merchant` with your store's domain (Shopify asks you to confirm), or open Flowport from the Shopify admin.",
  },
  merchant_form_expired: {
    status: 403,
    title: 'Form expired (CSRF check failed)',
    retry: 'no',
    area: 'shopify',
    description:
      "A form on the merchant page was sent without the page's anti-forgery token, with one from another session, or from another site; or a sign-in with a Shopify session token was posted from another site (`Origin`, `Sec-Fetch-Site`). Only a form Flowport rendered in your session can change anything, and only Flowport's own pages can sign a browser in. Nothing was changed.",
    fix: 'Reload the merchant page and send the form again.',
  },
  shopify_webhook_shop_mismatch: {
    status: 400,
    title: 'Shopify webhook names another store',
    retry: 'no',
    area: 'shopify',
    description:
      "A verified Shopify webhook (`app/uninstalled` or a privacy webhook) whose signed payload names no store's myshopify.com domain (`myshopify_domain`/`domain` of the Shop resource, `shop_domain` of a privacy webhook), or whose `X-Shopify-Shop-Domain` header names another store than the payload. Only the body is signed, so Flowport acts on the store the payload names and refuses a header that disagrees. Nothing was changed and the webhook id was not recorded.",
    fix: 'Nothing to do for deliveries from Shopify, which always agree. A tool that replays Shopify webhooks must send the body unaltered, with the header naming the same store as the body.',
  },
  shopify_webhook_topic_mismatch: {
    status: 400,
    title: 'Shopify webhook topic does not fit its payload',
    retry: 'no',
    area: 'shopify',
    description:
      "The `X-Shopify-Topic` header (unsigned) does not fit the signed payload's shape: `app/uninstalled` carries the Shop resource (`myshopify_domain`, `domain`); `customers/data_request` carries `data_request`; `customers/redact` carries `customer` and `orders_to_redact`; `shop/redact` carries none of these. A signed request of one kind relabelled as another is refused, so a data request cannot erase a shop. Nothing was changed and the webhook id was not recorded.",
    fix: 'Nothing to do for deliveries from Shopify. A tool that replays Shopify webhooks must keep each body with its own topic, and send `app/uninstalled` to its own URL and the privacy topics to the privacy webhook URL.',
  },
  shopify_lifecycle_timestamp_future: {
    status: 400,
    title: 'Flow lifecycle signal dated in the future',
    retry: 'no',
    area: 'shopify',
    description:
      "A verified Flow trigger lifecycle callback whose `timestamp` is more than 5 minutes after this server's clock. The newest signal per store and trigger wins, so a signal dated far ahead would outrank every real one after it. Nothing was stored; the trigger's readiness is unchanged.",
    fix: "Check this server's clock (NTP). Flow sends the time of the change; a signal from Shopify is never hours ahead, and the next one is taken as usual.",
  },
  event_expired_while_held: {
    answers: ['event'],
    status: 410,
    title: 'Event expired while held',
    layer: 'target_state',
    retry: 'no',
    area: 'shopify',
    description:
      "The event was held (the app was disconnected or uninstalled, or Shopify refused the store: frozen, locked, access denied, not found) and the hold outlasted its body: the plan's body retention ended before the shop could take deliveries again (the time the event read showed as `handoff.hold.release_by`). The event ended `failed` and its body was purged as retention says; it was never delivered. Its metadata (receipt, hash, size, attempts) stays, so the event is listed, never silently lost (ADR 0210). An incident (`retention_expiring`) warned a day before.",
    fix: 'Ask the sender to send the event again if it still matters. To keep held events deliverable, end the hold sooner (pay the Shopify bill, reconnect or reinstall the app) or move to a plan with longer retention.',
  },
  shop_uninstalled: {
    answers: ['event'],
    status: 409,
    title: 'App uninstalled; delivery held',
    layer: 'target_state',
    retry: 'no',
    area: 'shopify',
    description:
      "The merchant uninstalled the Flowport app from the store (Shopify sent `app/uninstalled`). Flowport deleted the store's access token, revoked every grant and merchant session of the shop, and holds its events in the `held` state instead of calling Flow. Events that arrive meanwhile are accepted and held too. A held event keeps its body until the plan's retention ends (its read's `handoff.hold.release_by`); one still held then ends `failed` with `FP-H-HEXP`, kept as a record.",
    fix: 'Reinstall the app (`/shopify/install?shop=<store>.myshopify.com` or the Shopify App Store). Reinstalling restores the shop and releases every held event still within retention; those past it ended `failed` (`FP-H-HEXP`) and stay listed. New grants are created on the merchant page.',
  },
} as const satisfies Record<string, ErrorDef>;

/** Handoff outcome of the Flow trigger lifecycle (api/src/shopify/flow-lifecycle.ts). */
export const FLOW_LIFECYCLE_ERRORS = {
  flow_workflow_disabled: {
    answers: ['event'],
    status: 409,
    title: 'No enabled workflow uses the trigger',
    layer: 'target_state',
    retry: 'no',
    area: 'handoff',
    description:
      "Shopify Flow told Flowport, through the trigger lifecycle callback, that no enabled workflow in this store uses the event's trigger. Flowport did not call Shopify (it would start no workflow and cost Admin API points) and ended the event `no_workflow`; its reason names the time of Flow's signal. Until the first callback for a trigger, Flowport calls Shopify as usual.",
    fix: 'Turn on a workflow that starts with this Flowport trigger in Shopify Flow. Then recover the window in one action, not event by event: preview a bulk replay with `no_workflow_since` (and `no_workflow_until`; left out, the window ends when Flow said an enabled workflow uses the trigger again) — `POST /agent/v1/bulk-replay-intents`, or `npx flowport preview-bulk-replay` — and confirm it. It replays every event that ended `no_workflow` in the window and leaves out those already recovered, so previewing again is safe. The readiness history (`GET /agent/v1/flow/readiness/history`) dates the outage; `GET /agent/v1/events?state=no_workflow&recovered=false` lists what is left (see Bulk replay).',
  },
} as const satisfies Record<string, ErrorDef>;

// What a Shopify webhook may be trusted for (ADR 1210). Shopify signs the raw body only
// (X-Shopify-Hmac-Sha256); X-Shopify-Topic, X-Shopify-Shop-Domain and X-Shopify-Webhook-Id are
// unsigned. So the shop a webhook acts on comes from the signed payload (and must match the
// header when one is sent), the topic header must fit the payload's shape, and the webhook id is
// remembered only once the HMAC passed, per shop, topic and id, by one conditional insert
// (firstDelivery, merchant/shopify-app.ts).
import { AppError } from '../errors/problem.ts';
import { SHOP_DOMAIN_RE } from '../services/shops.ts';

/** The longest X-Shopify-Webhook-Id kept. */
const MAX_WEBHOOK_ID = 200;

/** The verified body as a JSON object, or invalid_json. */
export function webhookPayload(raw: Uint8Array, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch {
    throw new AppError('invalid_json', { detail: `The ${what} body is not valid JSON.` });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new AppError('invalid_json', { detail: `The ${what} body is not a JSON object.` });
  return parsed as Record<string, unknown>;
}

/**
 * The shop the signed payload names, lower-cased; X-Shopify-Shop-Domain, when sent, must name the
 * same store. A payload naming no myshopify.com domain, or a header naming another store, is
 * refused with shopify_webhook_shop_mismatch.
 */
export function boundShop(signedShop: unknown, header: string | undefined, topic: string): string {
  const shop = typeof signedShop === 'string' ? signedShop.trim().toLowerCase() : '';
  if (!SHOP_DOMAIN_RE.test(shop))
    throw new AppError('shopify_webhook_shop_mismatch', {
      detail: `The signed ${topic} payload names no store's myshopify.com domain.`,
    });
  const claimed = header?.trim().toLowerCase();
  if (claimed !== undefined && claimed !== '' && claimed !== shop)
    throw new AppError('shopify_webhook_shop_mismatch', {
      detail: `X-Shopify-Shop-Domain says ${JSON.stringify(claimed.slice(0, 100))} but the signed payload is for ${shop}.`,
    });
  return shop;
}

const has = (p: Record<string, unknown>, key: string) => Object.hasOwn(p, key) && p[key] !== undefined;
const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether a payload has the shape of its topic: the Shop resource for app/uninstalled; for the
 * privacy topics, `data_request` (customers/data_request), `customer` and `orders_to_redact`
 * (customers/redact), neither (shop/redact). A topic header that does not fit is refused, so a
 * signed request of one kind cannot be relabelled as another.
 */
export function assertTopicFits(topic: string, p: Record<string, unknown>): void {
  const customerKeys = ['customer', 'orders_to_redact', 'orders_requested', 'data_request'];
  let fits: boolean;
  switch (topic) {
    case 'app/uninstalled':
      fits =
        (has(p, 'myshopify_domain') || has(p, 'domain')) &&
        !has(p, 'shop_domain') &&
        !customerKeys.some((k) => has(p, k));
      break;
    case 'customers/data_request':
      fits = isObject(p.data_request) && !has(p, 'orders_to_redact');
      break;
    case 'customers/redact':
      fits = isObject(p.customer) && Array.isArray(p.orders_to_redact) && !has(p, 'data_request');
      break;
    case 'shop/redact':
      fits = !customerKeys.some((k) => has(p, k));
      break;
    default:
      fits = false;
  }
  if (!fits)
    throw new AppError('shopify_webhook_topic_mismatch', {
      detail: `X-Shopify-Topic says ${topic}, but the signed payload does not have that topic's shape.`,
    });
}

/** X-Shopify-Webhook-Id (or the older X-Shopify-Event-Id), trimmed; null when absent or too long. */
export function webhookIdOf(header: (name: string) => string | undefined): string | null {
  const id = (header('x-shopify-webhook-id') ?? header('x-shopify-event-id') ?? '').trim();
  return id && id.length <= MAX_WEBHOOK_ID ? id : null;
}

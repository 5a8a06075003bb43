import { z } from '@hono/zod-openapi';
import { UNAVAILABLE_SHOP_STATUSES, unavailableShopsInWords } from '../handoff/outcomes.ts';
import { Timestamp } from './read-schemas.ts';

const code = (s: string) => `\`${s}\``;

export const ReadinessCheckSchema = z
  .object({
    check: z.string().describe('Stable name of the check (e.g. `shop_connected`).'),
    status: z
      .enum(['pass', 'warn', 'fail'])
      .describe('`pass`: fine; `warn`: works but needs attention; `fail`: events will not reach Flow until fixed.'),
    severity: z
      .enum(['blocking', 'advisory'])
      .nullable()
      .describe(
        'How much it matters when it does not pass: `blocking` (it fails: events will not reach Flow until it is fixed), `advisory` (it warns: events still flow); null when it passes.',
      ),
    detail: z.string().describe('What the check found, in plain words.'),
    docs_url: z.string().describe('Docs page explaining the check and how to fix it.'),
  })
  .openapi('ReadinessCheck');

/** The shop's Shopify connection, as setup and diagnostics report it. */
export const ShopConnectionFields = {
  connection_status: z
    .string()
    .describe(
      `\`connected\`; \`disconnected\` (Shopify refused the token: events are held until the app is reconnected); \`uninstalled\` (the merchant uninstalled the app: token deleted, grants revoked, events held until it is reinstalled); or, when Shopify refuses the store itself, ${unavailableShopsInWords(code)} (events are held and probed).`,
    ),
  next_probe_at: Timestamp.nullable().describe(
    `While Shopify refuses the store (${UNAVAILABLE_SHOP_STATUSES.map(code).join(', ')}): when Flowport next sends one held event to Shopify as a probe. Null otherwise.`,
  ),
};

/** Refused intake requests (receipts and tallies) of a window, as endpoint reads, setup and diagnostics show them. */
export const RefusalCountsSchema = z.object({
  total: z
    .number()
    .int()
    .describe(
      'Requests intake refused (answered 400 or above): they are receipts, not events, so `by_state` does not count them.',
    ),
  by_error_code: z
    .record(z.string(), z.number().int())
    .describe('Refused requests per catalog error code (e.g. `{"signature_mismatch": 4}`).'),
  operation: z
    .literal('listReceipts')
    .describe(
      "The operation that lists them: `listReceipts` with `result=refused` (and `endpoint_id`); each receipt says which check failed. Refusals past an endpoint's per-minute receipt budget are counted here but have no receipt.",
    ),
});

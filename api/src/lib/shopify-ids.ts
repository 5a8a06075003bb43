// Shopify resource ids as Flowport accepts them: a positive integer (or its digits) or a GID
// (`gid://shopify/Order/123`). Intake's mapping checks the ids it extracts with this, and the
// events list checks its `resource_id` filter with the same rule.

const GID_RE = /^gid:\/\/shopify\/([A-Za-z]+)\/([1-9]\d{0,19})$/;

/** Normalises a Shopify id: a positive integer or digit string → digits; a GID stays a GID. Null when invalid. */
export function normaliseResourceId(value: unknown, expectedType: string | null): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? String(value) : null;
  if (typeof value !== 'string') return null;
  const v = value.trim();
  if (/^[1-9]\d{0,19}$/.test(v)) return v;
  const m = GID_RE.exec(v);
  if (!m) return null;
  if (expectedType && m[1] !== expectedType) return null;
  return v;
}

// Where a human acts, said once (issue 43, items 2 and 3): the command a checkout runs, the
// merchant page, and every way a grant comes to be. The manifest's safety boundaries and
// `how_to_get_a_grant`, the grant read's `how_to_change`, the auth error pages, `doctor`, the
// OpenAPI security scheme, the banner, the CLI's messages and the docs all say it from here, so a
// printed command runs as printed and no surface sends a merchant to a command line when the
// merchant page does it. It imports nothing: the error catalog and lib/ both use it.

/**
 * What every printed command starts with: what a checkout of Flowport runs (`npx` finds the
 * package's own `flowport` bin).
 */
export const CLI_INVOCATION = 'npx flowport';

/** `npx flowport grants create …`: a command line, as printed. */
export function commandLine(...words: string[]): string {
  return [CLI_INVOCATION, ...words].join(' ');
}

/** The merchant page (shopify.app.toml's application_url; lib/shopify-app.ts). */
export const MERCHANT_PATH = '/merchant';

export interface GrantSource {
  /** Stable name of the way. */
  source: 'merchant_page' | 'oauth_consent' | 'operator_cli';
  /** Who uses it. */
  who: string;
  /** Where or how, as a phrase that follows who. */
  how: string;
}

/** Every way a grant comes to be; each is a human act, none an API or MCP call. */
export const GRANT_SOURCES: readonly GrantSource[] = [
  {
    source: 'merchant_page',
    who: 'the merchant',
    how: `on the merchant page (\`${MERCHANT_PATH}\`, Grants), which also revokes one`,
  },
  { source: 'oauth_consent', who: 'the merchant', how: 'by approving an MCP client on the OAuth consent page' },
  {
    source: 'operator_cli',
    who: 'an operator on the host',
    how: `with \`${commandLine('grants', 'create')}\` (and \`${commandLine('grants', 'revoke')}\`)`,
  },
];

/** One sentence: who creates grants, every way, and that no call can. */
export const WHO_CREATES_GRANTS = `Only a human creates a grant: ${GRANT_SOURCES.map((s) => `${s.who} ${s.how}`).join('; ')}. No API or MCP call can create, widen or extend one.`;

/** What an agent without the grant it needs does: ask the merchant, who uses the merchant page. */
export const ASK_FOR_A_GRANT = `Ask the merchant to create a grant for you on the merchant page (\`${MERCHANT_PATH}\`, Grants) with the tier you need, and to give you its token`;

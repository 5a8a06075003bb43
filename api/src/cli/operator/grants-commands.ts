// Operator commands of the grants/audit area: `grants create|list|revoke` and `audit verify`.
// Definitions only (help, completion and the reference page derive from them); the handlers
// are in ./grants.ts, loaded when one of these commands runs.
import { MAX_GRANT_DAYS } from '../../auth/grants.ts';
import { ALL_SCOPES, TIERS } from '../../auth/scopes.ts';
import type { OperatorCommand } from '../definitions.ts';

export const GRANTS_OPERATOR_COMMANDS: OperatorCommand[] = [
  {
    command: ['grants', 'create'],
    summary: 'Create a grant for one shop and print its token once.',
    options: [
      { flag: '--shop <id>', description: 'Shop id (`shop_…`).', required: true },
      { flag: '--tier <tier>', description: `Tier preset: ${TIERS.join(', ')}.`, required: true, choices: TIERS },
      {
        flag: '--scope <scope>',
        description: 'Extra scope on top of the tier (repeatable).',
        multiple: true,
        choices: ALL_SCOPES,
      },
      {
        flag: '--actor-kind <kind>',
        description: '`agent` or `human`: who will use the grant.',
        required: true,
        choices: ['agent', 'human'],
      },
      {
        flag: '--actor-name <name>',
        description: 'Name of the agent or person (shown in the audit log).',
        required: true,
      },
      { flag: '--actor-client <client>', description: 'Client software, e.g. an MCP client name (optional).' },
      {
        flag: '--expires-in <duration>',
        description: `Lifetime: e.g. 30m, 12h, 7d (at most ${MAX_GRANT_DAYS}d). Default 30d.`,
      },
    ],
  },
  {
    command: ['grants', 'list'],
    summary: 'List grants (never tokens): status, tier, actor, expiry, last use.',
    options: [{ flag: '--shop <id>', description: 'Only grants of this shop.' }],
  },
  {
    command: ['grants', 'revoke'],
    summary: 'Revoke a grant at once; its token answers 401 grant_revoked from then on.',
    options: [{ flag: '--grant <id>', description: 'Grant id (`grt_…`).', required: true }],
  },
  {
    command: ['audit', 'verify'],
    summary:
      "Check the audit log's global hash chain, or with --shop one shop's own chain (what GET /agent/v1/audit shows); exits 1 and names the first broken entry.",
    options: [
      { flag: '--shop <id>', description: "Verify this shop's own chain (`shop_…`) instead of the global one." },
    ],
  },
];

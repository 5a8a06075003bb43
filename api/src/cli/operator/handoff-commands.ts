// Operator commands of the handoff: `flowport sandbox` and `flowport shops reconnect`.
// Definitions only; the handlers are in ./handoff.ts, loaded when one of these commands runs.
import { UNAVAILABLE_SHOP_STATUSES } from '../../handoff/outcomes.ts';
import type { OperatorCommand } from '../definitions.ts';

export const HANDOFF_OPERATOR_COMMANDS: OperatorCommand[] = [
  {
    command: ['sandbox'],
    summary:
      'Run the local Shopify Admin GraphQL stand-in alone (flowTriggerReceive, fault injection, received-trigger record) until Ctrl-C.',
    options: [
      { flag: '--port <port>', description: 'Port to listen on (default 4100; 0 picks a free one).' },
      { flag: '--host <host>', description: 'Interface to bind (default 127.0.0.1).' },
    ],
    // Needs no store: the stand-in keeps its record in memory.
    store: false,
  },
  {
    command: ['shops', 'reconnect'],
    summary: `Mark a shop whose events are held (disconnected, or refused by Shopify: ${UNAVAILABLE_SHOP_STATUSES.join(', ')}) connected again (optionally with a new Admin API token) and release its held events.`,
    options: [
      { flag: '--shop <shopId>', description: 'The shop id (shop_…).', required: true },
      {
        flag: '--access-token-env <name>',
        description: 'Read the new Admin API access token from this environment variable (kept out of shell history).',
      },
      {
        flag: '--domain <domain>',
        description:
          "Correct the shop's myshopify.com domain first (Shopify answered 404 because the domain was wrong); its Admin API URL follows.",
      },
    ],
  },
];

// GET /agent/v1/action-intents — the shop's action intents, newest first.
import { z } from '@hono/zod-openapi';
import { ACTIONS } from '../../auth/scopes.ts';
import { listIntents } from '../../intents/list.ts';
import { INTENT_STATES } from '../../intents/types.ts';
import { defineRead } from '../define.ts';
import { Cursor, Limit, PageInfo } from '../read-schemas.ts';
import { ActionIntentSchema } from './shared.ts';

export const ActionIntentList = z
  .object({
    data: z.array(ActionIntentSchema).describe('Action intents, newest first.'),
    page: PageInfo,
  })
  .openapi('ActionIntentList');

export const listActionIntents = defineRead({
  name: 'list_action_intents',
  path: '/action-intents',
  summary: 'List action intents',
  description:
    'Previews, confirmations and their outcomes for this shop, newest first. Filter by state, kind or target; follow `page.next_cursor` for older ones.',
  family: 'recovery',
  scope: 'intents:read',
  meter: 'simple_read',
  request: {
    query: z.object({
      state: z.enum(INTENT_STATES).optional().describe('Only intents in this state.'),
      kind: z.enum(ACTIONS).optional().describe('Only intents of this kind.'),
      target_id: z.string().max(64).optional().describe('Only intents on this event, endpoint or shop id.'),
      cursor: Cursor,
      limit: Limit,
    }),
  },
  response: ActionIntentList,
  mcp: {
    title: 'List action intents',
    description:
      'See which replays, shares, endpoint changes and test events were previewed, confirmed, refused or are awaiting confirmation, newest first.',
  },
  run: async ({ ctx, input }) => listIntents({ ctx, input }),
});

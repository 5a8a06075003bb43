// GET /agent/v1/endpoints/{endpoint_id} — one endpoint, without secrets.
import { idPathParam } from '../read-schemas.ts';
import { defineRead } from '../define.ts';
import { EndpointView } from './schemas.ts';
import { readEndpoint } from '../../reads/endpoints.ts';

export const getEndpointOperation = defineRead({
  name: 'get_endpoint',
  path: '/endpoints/{endpoint_id}',
  summary: 'Read one endpoint',
  description:
    'One endpoint: sender, auth mode and its non-secret parameters, trigger variant, mapping, status, config version, ingest URL and the last 24 hours of events by state. The signing secret shows only its last 4 characters.',
  family: 'setup',
  scope: 'endpoints:read',
  meter: 'simple_read',
  request: { params: idPathParam('endpoint_id', 'ep_01jd0000000000000000000000', 'Endpoint id (`ep_…`).') },
  response: EndpointView,
  errors: ['not_found'],
  mcp: {
    title: 'Read one endpoint',
    description:
      'Check how one sender lane is configured (auth mode, header names, mapping, trigger variant) and how its recent events fared. Use it when events of one sender are rejected or fail.',
  },
  run: async ({ ctx, input }) => readEndpoint({ ctx, input }),
});

// GET /agent/v1/openapi/operations/{operation_id} — public. One operation of the
// committed OpenAPI contract with the component schemas it references, so an
// agent can check an exact request shape without downloading the whole document.
import { z } from '@hono/zod-openapi';
import { defineRead } from '../define.ts';
import { openApiOperationFor } from '../../services/docs.ts';

export const OpenApiOperationLookup = z
  .object({
    operation_id: z.string().describe('The `operationId` looked up.'),
    method: z.string().openapi({ example: 'GET', description: 'HTTP method, upper case.' }),
    path: z.string().openapi({ example: '/agent/v1/manifest', description: 'Path template of the operation.' }),

    openapi_url: z.string().describe('The whole contract.'),
    operation: z.record(z.string(), z.unknown()).describe('The OpenAPI Operation Object, verbatim.'),
    schemas: z
      .record(z.string(), z.unknown())
      .describe('Every `#/components/schemas/*` the operation references, transitively.'),
  })
  .openapi('OpenApiOperationLookup');

export const getOpenApiOperation = defineRead({
  name: 'get_open_api_operation',
  path: '/openapi/operations/{operation_id}',
  summary: 'Look up an OpenAPI operation',
  description:
    'One operation from the committed OpenAPI contract (parameters, request body, responses, scope, error codes) plus the component schemas it references. Public.',
  family: 'docs',
  scope: null,
  meter: null,
  request: {
    params: z.object({
      operation_id: z
        .string()
        .min(1)
        .max(100)
        .describe('An operationId from the manifest capabilities, e.g. `getManifest`.'),
    }),
  },
  response: OpenApiOperationLookup,
  errors: ['docs_unavailable', 'openapi_operation_not_found'],
  mcp: {
    title: 'Look up an API operation in the OpenAPI contract',
    description:
      'Get the exact request and response contract of one Agent Operations API operation (by operationId, as listed in the manifest), with the schemas it references.',
  },
  run: async ({ ctx, input }) => openApiOperationFor({ ctx, input }),
});

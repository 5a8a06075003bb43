import { z } from '@hono/zod-openapi';

export const ReadinessCheckSchema = z
  .object({
    check: z.string(),
    status: z.enum(['pass', 'warn', 'fail']),
    detail: z.string(),
    docs_url: z.string(),
  })
  .openapi('ReadinessCheck');

// One collection: the assembled docs tree (hand-written + generated pages).
import { docsLoader } from '@astrojs/starlight/loaders';
import { docsSchema } from '@astrojs/starlight/schema';
import { defineCollection } from 'astro:content';
import { z } from 'astro/zod';

export const collections = {
  docs: defineCollection({
    loader: docsLoader(),
    schema: docsSchema({
      extend: z.object({
        /** Render the self-hosted Scalar API reference below the page body. */
        scalar: z.boolean().optional(),
        /** Where a generated sub-page sits (API operation, MCP tool family, CLI group, error code). */
        breadcrumb: z.array(z.object({ label: z.string(), href: z.string().optional() })).optional(),
      }),
    }),
  }),
};

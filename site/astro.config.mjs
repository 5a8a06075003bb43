// The docs site. Content is assembled into src/content/docs/ by
// scripts/docs/generate.ts (run by `npm run build:site`); do not edit it there.
import starlight from '@astrojs/starlight';
import { defineConfig } from 'astro/config';
import { siteOrigin } from '../scripts/docs/lib/site-paths.ts';
import { SECTIONS, SITE_DESCRIPTION, SITE_TITLE } from './src/lib/sections.ts';

export default defineConfig({
  site: siteOrigin(),
  trailingSlash: 'always',
  build: { format: 'directory' },
  devToolbar: { enabled: false },
  // A static build has nothing to pre-bundle; skipping dependency discovery saves
  // minutes on a cold 2-core machine.
  vite: { optimizeDeps: { noDiscovery: true, include: [] } },
  integrations: [
    starlight({
      title: SITE_TITLE,
      description: SITE_DESCRIPTION,
      favicon: '/favicon.svg',
      // The site search reads the docs search index (site/src/components/Search.astro), not Pagefind's.
      pagefind: false,
      // JSON examples (error responses, configuration) wrap their long lines (URLs) instead of
      // running past the page at phone width; indentation is kept on wrapped lines.
      expressiveCode: { defaultProps: { overridesByLang: { json: { wrap: true } } } },
      lastUpdated: false,
      sidebar: SECTIONS.map((s) => ({ label: s.label, items: [{ autogenerate: { directory: s.dir } }] })),
      customCss: ['./src/styles/custom.css'],
      components: {
        PageTitle: './src/components/PageTitle.astro',
        MarkdownContent: './src/components/MarkdownContent.astro',
        Search: './src/components/Search.astro',
        // Content before the site navigation in the HTML (agents, screen readers), top navigation.
        Header: './src/components/Header.astro',
        // The home page's code-first hero and flow diagram.
        Hero: './src/components/Hero.astro',
        PageFrame: './src/components/PageFrame.astro',
        TwoColumnContent: './src/components/TwoColumnContent.astro',
      },
      routeMiddleware: './src/route-middleware.ts',
    }),
  ],
});

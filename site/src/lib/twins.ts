// Markdown twins: every docs page as plain Markdown at <path>.md, built from the
// page's Markdown source (not scraped from HTML), plus the page list that
// /llms.txt and /llms-full.txt are made from. One place decides every page's
// HTML path, twin path and section, so the three can never disagree.
import { getCollection } from 'astro:content';
import { SECTIONS } from './sections.ts';

export interface DocPage {
  /** Route slug without slashes: '' for home, 'start/quickstart', 'reference/errors'. */
  slug: string;
  title: string;
  description: string | undefined;
  /** Root-relative HTML path: '/', '/start/quickstart/'. */
  htmlPath: string;
  /** Root-relative twin path: '/index.md', '/start/quickstart.md'. */
  twinPath: string;
  /** Section dir from SECTIONS ('start' for home). */
  section: string;
  order: number;
  body: string;
  hero?: { title?: string; tagline?: string; actions: { text: string; link: string }[] };
}

export function slugOf(id: string): string {
  if (id === 'index') return '';
  return id.replace(/\/index$/, '');
}

export function htmlPathOf(slug: string): string {
  return slug === '' ? '/' : `/${slug}/`;
}

export function twinPathOf(slug: string): string {
  return slug === '' ? '/index.md' : `/${slug}.md`;
}

const SECTION_RANK = new Map<string, number>(SECTIONS.map((s, i) => [s.dir, i]));

/** All pages in reading order: section, then folder depth, then sidebar order, then slug. */
export async function loadPages(): Promise<DocPage[]> {
  const entries = await getCollection('docs');
  const pages = entries.map((e): DocPage => {
    const slug = slugOf(e.id);
    const section = slug === '' ? (SECTIONS[0]?.dir as string) : (slug.split('/')[0] as string);
    if (!SECTION_RANK.has(section)) {
      throw new Error(
        `Docs page "${e.id}" is outside the known sections (${SECTIONS.map((s) => s.dir).join(', ')}). Move it into one of those folders or add a section in site/src/lib/sections.ts.`,
      );
    }
    const data = e.data as {
      title: string;
      description?: string;
      sidebar?: { order?: number };
      hero?: { title?: string; tagline?: string; actions?: { text: string; link: string }[] };
    };
    return {
      slug,
      title: data.title,
      description: data.description,
      htmlPath: htmlPathOf(slug),
      twinPath: twinPathOf(slug),
      section,
      order: slug === '' ? -Infinity : (data.sidebar?.order ?? 1000),
      body: e.body ?? '',
      hero: data.hero
        ? { title: data.hero.title, tagline: data.hero.tagline, actions: data.hero.actions ?? [] }
        : undefined,
    };
  });
  const depth = (p: DocPage) => (p.slug === '' ? -1 : p.slug.split('/').length);
  return pages.sort(
    (a, b) =>
      (SECTION_RANK.get(a.section) ?? 99) - (SECTION_RANK.get(b.section) ?? 99) ||
      depth(a) - depth(b) ||
      a.order - b.order ||
      a.slug.localeCompare(b.slug),
  );
}

const ASIDE_LABELS: Record<string, string> = { note: 'Note', tip: 'Tip', caution: 'Caution', danger: 'Danger' };

/**
 * Turns a page's Markdown source into twin Markdown: drops HTML comments,
 * rewrites Starlight asides as block quotes, and makes root-relative links
 * absolute (pages point at their twins, other files at themselves).
 */
export function toTwinBody(body: string, origin: string, pageSlugs: ReadonlySet<string>): string {
  const withoutComments = body.replace(/<!--[\s\S]*?-->\n?/g, '');
  const out: string[] = [];
  let fence: string | null = null;
  let aside: string | null = null;
  const linkTarget = (path: string): string => {
    const m = /^([^#?]*)([?#].*)?$/.exec(path) as RegExpExecArray;
    const bare = m[1] as string;
    const rest = m[2] ?? '';
    const slug = bare.replace(/^\/+|\/+$/g, '');
    if (bare.endsWith('/') && pageSlugs.has(slug)) return `${origin}${twinPathOf(slug)}${rest}`;
    return `${origin}${path}`;
  };
  for (const line of withoutComments.split('\n')) {
    const fenceMatch = /^\s*(```+|~~~+)/.exec(line);
    if (fenceMatch) {
      if (fence === null) fence = fenceMatch[1] as string;
      else if (line.trim().startsWith(fence)) fence = null;
      out.push(aside ? `> ${line}` : line);
      continue;
    }
    if (fence !== null) {
      out.push(aside ? `> ${line}` : line);
      continue;
    }
    const open = /^:::(note|tip|caution|danger)(?:\[(.*)\])?\s*$/.exec(line);
    if (open) {
      aside = open[1] as string;
      out.push(`> **${open[2] || ASIDE_LABELS[aside]}:**`, '>');
      continue;
    }
    if (aside && /^:::\s*$/.test(line)) {
      aside = null;
      continue;
    }
    const linked = line.replace(/\]\((\/[^)\s]*)\)/g, (_m, p: string) => `](${linkTarget(p)})`);
    out.push(aside ? (linked === '' ? '>' : `> ${linked}`) : linked);
  }
  return out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function renderTwin(page: DocPage, origin: string, pageSlugs: ReadonlySet<string>): string {
  const lines = [
    `# ${page.title}`,
    '',
    `Canonical: ${origin}${page.htmlPath}`,
    `Markdown: ${origin}${page.twinPath}`,
    `Index of every page (for agents): ${origin}/llms.txt`,
    '',
  ];
  if (page.description) lines.push(`> ${page.description}`, '');
  if (page.hero?.title) lines.push(`**${page.hero.title}.**`, '');
  if (page.hero?.tagline) lines.push(page.hero.tagline, '');
  if (page.hero && page.hero.actions.length > 0) {
    lines.push(
      ...page.hero.actions.map(
        (a) =>
          `- [${a.text}](${a.link.startsWith('/') ? toTwinBody(`](${a.link})`, origin, pageSlugs).slice(2, -1) : a.link})`,
      ),
      '',
    );
  }
  lines.push(toTwinBody(page.body, origin, pageSlugs));
  return `${lines.join('\n').trim()}\n`;
}

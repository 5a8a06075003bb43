// The docs search index (issue 43, point 4): one MiniSearch index over the published Markdown twins,
// built once per site build (scripts/docs/build-site.ts writes it to SEARCH_INDEX_FILE) and read
// by both searches: the agents' (GET /agent/v1/docs/search, MCP search_docs; services/docs.ts) and
// the site's search dialog (site/src/components/Search.astro). Ranking is MiniSearch's BM25 with the
// title, the page's one-line summary, its path and its headings weighing more than the body.
// No Node imports: the browser bundles this file too.
import MiniSearch, { type Options, type SearchResult } from 'minisearch';

/** The index file at the root of the built site. */
export const SEARCH_INDEX_FILE = 'search-index.json';

/** One page as the index sees it. */
export interface SearchDocument {
  /** Site path of the page (`/recover/replay/`): the document id. */
  path: string;
  title: string;
  /** The page's one-line description (the twin's first block quote). */
  summary: string;
  headings: string;
  /** The path's words (`recover replay`, `reference errors signature_mismatch`). */
  words: string;
  body: string;
}

/** A hit: the page, its stored fields and its score (higher is better). */
export interface SearchHit {
  path: string;
  title: string;
  summary: string;
  score: number;
}

// Words that say nothing about which page answers (questions are asked in whole sentences).
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could did do does doing for from had has have how i if in into is it its ' +
    'me my of on or our should so than that the their them then there these they this to was we were what when ' +
    'where which who why will with would you your get got just use using want need'
  ).split(' '),
);

/**
 * A light English stemmer, the same for pages and queries: plural and verb endings go, so
 * "events", "replayed", "refused", "deliveries" and "kept" meet "event", "replay", "refuse",
 * "delivery" and "keep".
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4)
    w = w.slice(0, w.endsWith('ied') ? -3 : -2) + (w.endsWith('ied') ? 'y' : '');
  if (w.length > 3 && /([^aeiouls])\1$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

/** Words of a text; a snake_case or kebab-case name is kept whole and also split into its words. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().split(/[^a-z0-9_-]+/)) {
    const token = raw.replace(/^[_-]+|[_-]+$/g, '');
    if (!token) continue;
    const parts = token.split(/[_-]+/).filter(Boolean);
    if (parts.length > 1) out.push(token.replace(/-/g, '_'));
    out.push(...parts);
  }
  return out;
}

/** A token as indexed and searched: lower case, stemmed, stop words and single letters dropped. */
export function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (t.length < 2 || STOP_WORDS.has(t)) return null;
  return t.includes('_') ? t : stem(t);
}

const BOOST = { title: 6, words: 4, summary: 3, headings: 2, body: 1 } as const;

/**
 * Users' words for what the docs call otherwise (a search engine's synonyms list): a query word on
 * the left also looks for the words on the right, at half weight. Add a pair when a question in
 * users' own words misses its page (tests/site/search-questions.json).
 */
const SYNONYMS: Record<string, string> = {
  twice: 'duplicate',
  double: 'duplicate',
  again: 'duplicate replay',
  fail: 'mismatch reject',
  wrong: 'mismatch',
  invalid: 'mismatch malformed',
  refuse: 'refusal reject',
  reject: 'refusal',
  block: 'refusal reject',
  notify: 'alert',
  notification: 'alert',
  proof: 'receipt',
  evidence: 'receipt',
  kept: 'retention',
  keep: 'retention',
  erase: 'privacy redact',
  gdpr: 'privacy redact',
  permission: 'scope grant',
  approve: 'consent grant',
  off: 'disabled outage',
  outage: 'bulk',
  quota: 'plan limit',
  big: 'large',
  huge: 'large',
  old: 'tolerance',
  gave: 'exhausted',
  claude: 'mcp',
  cursor: 'mcp',
  start: 'quickstart',
  started: 'quickstart',
};

const SYNONYM_WEIGHT = 0.5;
/** SYNONYMS by the stem of the user's word, so every form of it ("refused", "refuses") has them. */
const SYNONYMS_BY_STEM = new Map(Object.entries(SYNONYMS).map(([word, also]) => [stem(word), also]));

export const SEARCH_OPTIONS: Options<SearchDocument> = {
  idField: 'path',
  fields: ['title', 'summary', 'headings', 'words', 'body'],
  storeFields: ['title', 'summary'],
  tokenize,
  processTerm,
  searchOptions: {
    boost: BOOST,
    // "replay" finds "replays"; a typo of one letter in a longer word still finds its page.
    prefix: (term) => term.length >= 4,
    fuzzy: (term) => (term.length >= 6 ? 0.2 : false),
    combineWith: 'OR',
  },
};

/** The index's document for one Markdown twin; `origin` (the build's placeholder) is left out of the text. */
export function searchDocument(path: string, markdown: string, origin: string): SearchDocument {
  const lines = markdown.replaceAll(origin, '').split('\n');
  const title = /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim() ?? path;
  const summary =
    lines
      .find((l) => l.startsWith('> '))
      ?.slice(2)
      .trim() ?? '';
  const headings = lines
    .filter((l) => /^#{2,6}\s/.test(l))
    .map((l) => l.replace(/^#+\s+/, ''))
    .join('\n');
  const body = lines
    .filter((l) => !/^(#\s|Canonical:|Markdown:|Index of every page)/.test(l))
    .join('\n')
    // Link targets are addresses, not words of the page.
    .replace(/\]\([^)]*\)/g, ']');
  const words = path.split('/').filter(Boolean).join(' ');
  return { path, title, summary, headings, words, body };
}

export function buildSearchIndex(documents: SearchDocument[]): MiniSearch<SearchDocument> {
  const index = new MiniSearch<SearchDocument>(SEARCH_OPTIONS);
  index.addAll(documents);
  return index;
}

export function loadSearchIndex(json: string): MiniSearch<SearchDocument> {
  return MiniSearch.loadJSON<SearchDocument>(json, SEARCH_OPTIONS);
}

/**
 * How much a page's matches count by the kind of page: the per-operation, per-tool and per-command
 * reference pages (many, short, and all alike) count less than guides and error-code pages, so a
 * task phrased in words finds the guide first; their exact names (`preview_replay`) still find them.
 */
function pageWeight(path: string): number {
  return /^\/reference\/(api|mcp|cli)\/./.test(path) ? 0.6 : 1;
}

/** The query with each word's synonyms added after it, and how many of its terms are the user's own. */
function expand(query: string): { text: string; own: number } {
  const own = tokenize(query)
    .map(processTerm)
    .filter((t): t is string => t !== null);
  const extra = tokenize(query).flatMap((t) => (SYNONYMS_BY_STEM.get(stem(t)) ?? '').split(' ').filter(Boolean));
  return { text: [query, ...extra].join(' '), own: own.length };
}

/** Best first; scores rounded to two decimals (ties keep MiniSearch's order). */
export function searchIndex(index: MiniSearch<SearchDocument>, query: string, limit: number): SearchHit[] {
  const { text, own } = expand(query);
  return index
    .search(text, {
      boostTerm: (_term, i) => (i < own ? 1 : SYNONYM_WEIGHT),
      boostDocument: (id) => pageWeight(String(id)),
    })
    .slice(0, limit)
    .map((r: SearchResult) => ({
      path: String(r.id),
      title: String(r.title ?? r.id),
      summary: String(r.summary ?? ''),
      score: Math.round(r.score * 100) / 100,
    }));
}

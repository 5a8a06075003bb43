// axe-core in a real page: loaded as an init script, run in the page with `axe.run` (WCAG 2.1 A
// and AA rules). The browser tests that hold pages to "no serious or critical violation" share it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { BrowserContext, Page } from 'playwright-core';

export const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core'), 'utf8');
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Adds axe to every page the context opens. */
export async function withAxe(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: AXE_SOURCE });
}

/**
 * axe's violations on the page as loaded (only violations are computed). `exclude` leaves elements
 * out (CSS selectors); the page-level rules still run, as the context is still the whole document.
 */
export function axeViolations(page: Page, exclude: string[] = []): Promise<AxeViolation[]> {
  return page.evaluate(
    async ({ tags, exclude }) => {
      // This runs in the page; axe's context defaults to the whole document.
      const axe = (
        globalThis as unknown as { axe: { run(c: unknown, o: unknown): Promise<{ violations: AxeViolation[] }> } }
      ).axe;
      const r = await axe.run(
        { exclude },
        {
          runOnly: { type: 'tag', values: tags },
          resultTypes: ['violations'],
        },
      );
      return r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target })),
      }));
    },
    { tags: WCAG_TAGS, exclude },
  );
}

/** The serious and critical violations, each with up to five of its targets (empty when none). */
export async function seriousViolations(
  page: Page,
): Promise<{ id: string; impact: string | null; targets: string[] }[]> {
  return (await axeViolations(page))
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
}

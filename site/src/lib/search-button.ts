// Starlight's search button (Search.astro, @astrojs/starlight 0.42.4) shows "Search" and a
// shortcut hint ("Ctrl K", "⌘ K" on Apple devices), but its accessible name is
// aria-label="Search": the visible label is not in the name (WCAG 2.5.3 Label in Name, axe
// `label-content-name-mismatch`). The hint is also how screen reader users learn the shortcut
// (Starlight keeps it out of aria-hidden because aria-keyshortcuts is poorly announced).
//
// This rewrites the rendered button so its name comes from its content, i.e. is exactly the
// text on screen: the aria-label goes, the "Search" text is no longer aria-hidden (below
// Starlight's md breakpoint it is visually hidden instead of display:none, see
// components/Search.astro, so the icon-only button is still named "Search"), and the label and
// the keys are separated by spaces (the markup had none: a text reading gave "SearchCtrlK").
// Everything else, including the dialog, pagefind and the Ctrl/⌘+K shortcut, is Starlight's.

/** The class that replaces Starlight's `sl-hidden md:sl-block` on the "Search" text. */
const SEARCH_LABEL_CLASS = 'fp-search-label';

function changeOnce(
  html: string,
  pattern: RegExp,
  replace: (match: string, ...groups: string[]) => string,
  what: string,
) {
  let count = 0;
  const out = html.replace(pattern, (match: string, ...groups: string[]) => {
    count++;
    return replace(match, ...groups);
  });
  if (count !== 1) {
    throw new Error(
      `site/src/lib/search-button.ts: expected one ${what} in Starlight's search button, found ${count}. ` +
        'Starlight changed its Search.astro markup; check whether the override is still needed and update it.',
    );
  }
  return out;
}

/** The HTML Starlight's Search component rendered, with the open button named by its visible text. */
export function nameSearchButtonByItsText(html: string): string {
  return changeOnce(
    html,
    /<button data-open-modal\b[^>]*>[\s\S]*?<\/button>/g,
    (button) => {
      let b = changeOnce(button, /^(<button\b[^>]*?) aria-label="[^"]*"/g, (_m, start) => start ?? '', 'aria-label');
      b = changeOnce(
        b,
        /<span class="sl-hidden md:sl-block( [^"]*)?" aria-hidden="true">/g,
        (_m, rest) => `<span class="${SEARCH_LABEL_CLASS}${rest ?? ''}">`,
        'aria-hidden "Search" text',
      );
      // A space after the label and between the keys ("Search Ctrl K"). The button and the hint
      // are flex containers, so the spaces change nothing on screen.
      b = changeOnce(b, /<\/span>(?=<kbd\b)/g, (m) => `${m} `, 'shortcut hint after the label');
      return b.replace(/<\/kbd>(?=<kbd\b)/g, '</kbd> ');
    },
    'search button',
  );
}

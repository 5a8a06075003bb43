// Labels of the operation families, shared by the MCP and CLI reference pages
// and the CLI's help (one place, so the groups read the same everywhere).
import type { Family } from '../core/types.ts';

export const FAMILY_LABELS: Record<Family, string> = {
  docs: 'Docs and manifest',
  events: 'Event investigation',
  recovery: 'Recovery previews and actions',
  setup: 'Setup and endpoints',
  account: 'Plan, grant and audit',
};

export function familyLabel(family: string): string {
  return (FAMILY_LABELS as Record<string, string>)[family] ?? family;
}

// What `flowport <words>` answers when the words name no command: the new name of a renamed one,
// the commands under a group, or the commands a small typo away. Loaded at start with ./main.ts.
import { commandLine } from '../lib/command-line.ts';
import { editDistance } from '../lib/suggest.ts';

/**
 * Agent commands before the naming rule (ADR 1000) gave every action one name: the old
 * spelling answers with the new one instead of a bare "unknown command".
 */
const RENAMED_COMMANDS: Record<string, string> = {
  manifest: 'get-manifest',
  'docs search': 'search-docs',
  'docs read': 'get-docs-page',
  'openapi operation': 'get-open-api-operation',
  grant: 'get-grant',
  'plan-usage': 'get-plan-usage',
  audit: 'list-audit',
  setup: 'get-setup',
  'endpoints list': 'list-endpoints',
  'endpoints show': 'get-endpoint',
  'events list': 'list-events',
  'events show': 'get-event',
  'events receipt': 'get-event-receipt',
  'receipts show': 'get-receipt',
  diagnostics: 'get-diagnostics',
  replay: 'preview-replay',
  'diagnostics share': 'preview-diagnostics-share',
  'endpoints add': 'preview-endpoint-create',
  'endpoints edit': 'preview-endpoint-edit',
  'endpoints rotate-secret': 'preview-secret-rotate',
  'endpoints delete': 'preview-endpoint-delete',
  'endpoints test': 'preview-test-event',
  'intents list': 'list-action-intents',
  'intents show': 'get-action-intent',
  'intents confirm': 'confirm-action-intent',
  'intents cancel': 'cancel-action-intent',
};

/** The usage error for command words that match no command. */
export function unknownCommand(all: readonly { words: readonly string[] }[], words: string[]): string {
  const typed = words.join(' ');
  const renamed = RENAMED_COMMANDS[words.slice(0, 2).join(' ')] ?? RENAMED_COMMANDS[words[0] ?? ''];
  if (renamed) {
    const old = RENAMED_COMMANDS[words.slice(0, 2).join(' ')] ? words.slice(0, 2).join(' ') : words[0];
    return `\`flowport ${old}\` is now \`${commandLine(renamed)}\` (one name per action: the MCP tool ${renamed.replace(/-/g, '_')}). Run \`${commandLine(renamed, '--help')}\`.`;
  }
  const group = all.filter((c) => c.words.length > 1 && c.words[0] === words[0]);
  if (group.length)
    return `\`${commandLine(typed)}\` is not a command. Under \`${words[0]}\`: ${group.map((c) => c.words.join(' ')).join(', ')}.`;
  // A command is near when its name, or one of its hyphenated words, is a small typo away.
  const first = words[0] ?? '';
  const names = [...new Set(all.map((c) => c.words[0] as string))];
  const near = names.filter(
    (n) =>
      editDistance(n, first) <= 2 || n.split('-').some((part) => part.length > 3 && editDistance(part, first) <= 1),
  );
  return `Unknown command \`${commandLine(typed)}\`.${near.length ? ` Did you mean ${near.map((n) => `\`${n}\``).join(' or ')}?` : ''} Run \`${commandLine('--help')}\` for every command.`;
}

// What `flowport <words>` answers when the words name no command: the new name of a renamed one,
// the commands under a group, or the commands a small typo away. Loaded at start with ./main.ts.
import { commandLine } from '../lib/command-line.ts';
import { editDistance } from '../lib/suggest.ts';
import { renamedCommands } from '../operations/naming.ts';

/** Agent commands before the naming rule (ADR 1000): the old spelling answers with the new one. */
const RENAMED_COMMANDS = renamedCommands();

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

// `flowport completion bash|zsh`: a static completion script generated from the
// same command list the parser uses (subcommands, options, option values), so
// pressing Tab never starts Node.

export interface CompletionCommand {
  words: readonly string[];
  /** Flags as typed (`--state`, `--json`). */
  flags: readonly string[];
  /** Allowed values per flag, for flags that have a fixed set. */
  values: Record<string, readonly string[]>;
  /** Allowed values of the first positional argument, if fixed (e.g. `completion <shell>`). */
  argChoices?: readonly string[];
}

function sh(s: string): string {
  // Command words, flags and values are plain tokens; anything that could break out of the quotes is dropped.
  return s.replace(/[^A-Za-z0-9_.:|=/ -]/g, '');
}

function caseArms(entries: [string, string[]][]): string {
  return entries.map(([key, words]) => `    "${sh(key)}") echo "${words.map(sh).join(' ')}" ;;`).join('\n');
}

/** The shell functions both scripts share: children of a command path, its flags, a flag's values. */
function helpers(commands: readonly CompletionCommand[]): string {
  const children = new Map<string, Set<string>>();
  for (const c of commands) {
    for (let i = 0; i < c.words.length; i++) {
      const parent = c.words.slice(0, i).join(' ');
      const set = children.get(parent) ?? new Set<string>();
      set.add(c.words[i] as string);
      children.set(parent, set);
    }
  }
  const childArms: [string, string[]][] = [...children].map(([k, v]) => [k, [...v].sort()]);
  for (const c of commands)
    if (c.argChoices) {
      const key = c.words.join(' ');
      const existing = childArms.find(([k]) => k === key);
      if (existing) existing[1].push(...c.argChoices);
      else childArms.push([key, [...c.argChoices]]);
    }
  const flagArms: [string, string[]][] = commands.map((c) => [c.words.join(' '), [...c.flags]]);
  const valueArms: [string, string[]][] = commands.flatMap((c) =>
    Object.entries(c.values).map(([flag, vals]) => [`${c.words.join(' ')}/${flag}`, [...vals]] as [string, string[]]),
  );
  return `_flowport_children() {
  case "$1" in
${caseArms(childArms)}
  esac
}

_flowport_flags() {
  case "$1" in
${caseArms(flagArms)}
    *) echo "--help --json" ;;
  esac
}

_flowport_values() {
  case "$1" in
${caseArms(valueArms)}
  esac
}

# Walks the typed words: each word that is a known child extends the command path.
_flowport_cmdpath() {
  local cmdpath="" w next
  for w in "$@"; do
    case "$w" in -*) continue ;; esac
    next=" $(_flowport_children "$cmdpath") "
    case "$next" in *" $w "*) cmdpath="\${cmdpath:+$cmdpath }$w" ;; esac
  done
  echo "$cmdpath"
}

# Candidates for the word being completed, given the command path and the previous word.
_flowport_candidates() {
  local cmdpath="$1" prev="$2" cur="$3" vals
  case "$prev" in
    --*)
      vals="$(_flowport_values "$cmdpath/$prev")"
      if [ -n "$vals" ]; then echo "$vals"; return; fi ;;
  esac
  case "$cur" in
    -*) _flowport_flags "$cmdpath" ;;
    *) _flowport_children "$cmdpath" ;;
  esac
}`;
}

export function bashCompletion(commands: readonly CompletionCommand[]): string {
  return `# flowport completion for bash. Load it with:  source <(flowport completion bash)
# (or save it to a file and source that from ~/.bashrc).
${helpers(commands)}

_flowport() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev=""
  [ "$COMP_CWORD" -gt 1 ] && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local cmdpath
  cmdpath="$(_flowport_cmdpath "\${COMP_WORDS[@]:1:COMP_CWORD-1}")"
  COMPREPLY=($(compgen -W "$(_flowport_candidates "$cmdpath" "$prev" "$cur")" -- "$cur"))
}
complete -F _flowport flowport
`;
}

export function zshCompletion(commands: readonly CompletionCommand[]): string {
  return `# flowport completion for zsh. Load it after compinit with:  source <(flowport completion zsh)
# (or save it to a file and source that from ~/.zshrc).
${helpers(commands)}

_flowport() {
  local cur="\${words[CURRENT]}" prev=""
  (( CURRENT > 2 )) && prev="\${words[CURRENT-1]}"
  local cmdpath
  cmdpath="$(_flowport_cmdpath "\${(@)words[2,CURRENT-1]}")"
  local -a candidates
  candidates=($(_flowport_candidates "$cmdpath" "$prev" "$cur"))
  compadd -- "\${candidates[@]}"
}
compdef _flowport flowport
`;
}

/**
 * `claude-router completion bash|zsh|fish`: a shell completion script generated from the command
 * tree itself (commander has none built in), so every command and option — those added later
 * too — completes. zsh loads the bash script through its `bashcompinit`.
 */
import type { Command, Option } from 'commander';

/** The shells a script is made for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** One command of the tree: its path of names (empty for the program), its subcommands and options. */
interface Node {
  path: string[];
  cmd: Command;
}

/** Every command of the tree, the program first, depth first. */
function nodes(program: Command): Node[] {
  const out: Node[] = [];
  const walk = (cmd: Command, path: string[]) => {
    out.push({ path, cmd });
    for (const sub of cmd.commands) if (sub.name() !== 'help') walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return out;
}

/** The long (else short) flag of each option, the program's options counting for every command. */
const flags = (options: readonly Option[]) => options.map((o) => o.long ?? o.short ?? '').filter(Boolean);
const takesValue = (o: Option) => o.required || o.optional;

/** The completion script for `shell`, for the program `program` (named by `program.name()`). */
export function completionScript(program: Command, shell: Shell): string {
  return shell === 'fish' ? fishScript(program) : bashScript(program, shell === 'zsh');
}

function bashScript(program: Command, zsh: boolean): string {
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
  const all = nodes(program);
  const globals = flags(program.options);
  const valueFlags = new Set(all.flatMap((n) => n.cmd.options.filter(takesValue).map((o) => o.long ?? o.short ?? '')));
  const choices = new Map<string, string[]>();
  for (const n of all) for (const o of n.cmd.options) if (o.argChoices && o.long && !choices.has(o.long)) choices.set(o.long, o.argChoices);
  const choiceCases = [...choices].map(([flag, list]) => `    ${flag}) COMPREPLY=( $(compgen -W "${list.join(' ')}" -- "$cur") ); return ;;`).join('\n');
  const cases = (pick: (n: Node) => string[]) => all.map((n) => `    "${n.path.join(' ')}") echo "${pick(n).join(' ')}" ;;`).join('\n');
  const subs = (n: Node) => n.cmd.commands.map((c) => c.name()).filter((c) => c !== 'help');
  return `${zsh ? `# zsh: through bashcompinit.\nautoload -U +X bashcompinit && bashcompinit\n` : ''}# ${name} completion. Load it with: eval "$(${name} completion ${zsh ? 'zsh' : 'bash'})"
${fn}_subcommands() {
  case "$1" in
${cases(subs)}
  esac
}
${fn}_words() {
  case "$1" in
${cases((n) => [...subs(n), ...flags(n.cmd.options), '--help', ...(n.path.length ? globals : [])])}
  esac
}
${fn}() {
  local i w path="" cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
${choiceCases}
  esac
  case " ${[...valueFlags].join(' ')} " in
    *" $prev "*) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
  esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    if [[ " $(${fn}_subcommands "$path") " == *" $w "* ]]; then path="\${path:+$path }$w"; fi
  done
  COMPREPLY=( $(compgen -W "$(${fn}_words "$path")" -- "$cur") )
}
complete -o default -F ${fn} ${name}
`;
}

function fishScript(program: Command): string {
  const name = program.name();
  const q = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const lines = [`# ${name} completion. Load it with: ${name} completion fish | source`, `complete -c ${name} -f`];
  const option = (o: Option, condition: string | undefined) => {
    const parts = [`complete -c ${name}`];
    if (condition) parts.push(`-n ${q(condition)}`);
    if (o.long) parts.push(`-l ${o.long.replace(/^--/, '')}`);
    if (o.short) parts.push(`-s ${o.short.replace(/^-/, '')}`);
    if (takesValue(o)) parts.push(o.argChoices ? `-x -a ${q(o.argChoices.join(' '))}` : '-r -F');
    parts.push(`-d ${q(o.description)}`);
    return parts.join(' ');
  };
  for (const o of program.options) lines.push(option(o, undefined));
  lines.push(`complete -c ${name} -s h -l help -d 'show help for a command'`);
  for (const { path, cmd } of nodes(program)) {
    const subs = cmd.commands.filter((c) => c.name() !== 'help');
    const here = path.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${path[path.length - 1]}`;
    const notYet = subs.length ? `; and not __fish_seen_subcommand_from ${subs.map((c) => c.name()).join(' ')}` : '';
    for (const sub of subs) lines.push(`complete -c ${name} -n ${q(here + notYet)} -a ${sub.name()} -d ${q(sub.summary() || sub.description())}`);
    if (path.length) for (const o of cmd.options) lines.push(option(o, here));
  }
  return lines.join('\n') + '\n';
}

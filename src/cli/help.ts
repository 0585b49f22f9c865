/** Pieces every command's definition shares: the example block of its help and the `--config` option. */
import { Option, type Command } from 'commander';

/** An example shown under a command's help. */
export const example = (...lines: string[]) => `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

/** `-c, --config <file>`. */
export const configOption = () => new Option('-c, --config <file>', 'proxy-config.yaml (selects the state directory; default: ~/.config/claude-router)');

/** How the client commands find the proxy, under their help. */
export const PROXY_HELP =
  'The proxy is the one registered in the state directory (started there, or the demo);\nits client key comes from that state directory, else CLAUDE_ROUTER_KEY.';

/** `--config`, `--url` and `--key`: the options of a command that asks a running proxy. */
export function addProxyOptions(cmd: Command): Command {
  return cmd
    .addOption(configOption())
    .option('--url <url>', 'the proxy to ask (default: the one registered in the state directory)')
    .option('--key <key>', 'the client key (visible to other users: prefer CLAUDE_ROUTER_KEY)');
}

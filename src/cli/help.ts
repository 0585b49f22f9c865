/** Pieces every command's definition shares: the example block of its help and the `--config` option. */
import { Option } from 'commander';

/** An example shown under a command's help. */
export const example = (...lines: string[]) => `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

/** `-c, --config <file>`. */
export const configOption = () => new Option('-c, --config <file>', 'proxy-config.yaml (selects the state directory; default: ~/.config/claude-router)');

/**
 * Colours for the CLI's output: only on a terminal that has them, never with `--no-color` or
 * `NO_COLOR` set to anything non-empty (no-color.org); Node's `hasColors` also honours
 * `NODE_DISABLE_COLORS`, `FORCE_COLOR` and `TERM=dumb`.
 */
import { DEFAULT_WIDTH } from '../routing/textFit';

/** The styles the output uses; each returns its text unchanged when colours are off. */
export interface Paint {
  bold: (text: string) => string;
  dim: (text: string) => string;
  green: (text: string) => string;
  yellow: (text: string) => string;
  red: (text: string) => string;
}

/** SGR codes: on, and the code that turns only that attribute off again (so styles nest). `util.styleText` is not used: from Node 20.19 it decides by itself, from the environment, whether to colour. */
const style =
  (on: number, off: number) =>
  (text: string): string =>
    `\x1b[${on}m${text}\x1b[${off}m`;
const identity = (text: string) => text;

/** Plain text: every style returns its text unchanged. */
export const PLAIN: Paint = { bold: identity, dim: identity, green: identity, yellow: identity, red: identity };
const COLOURED: Paint = { bold: style(1, 22), dim: style(2, 22), green: style(32, 39), yellow: style(33, 39), red: style(31, 39) };

/**
 * The styles for `stream`.
 * @param colorFlag false with `--no-color`
 */
export function paintFor(stream: NodeJS.WriteStream, colorFlag: boolean | undefined, env: NodeJS.ProcessEnv = process.env): Paint {
  if (colorFlag === false || (env.NO_COLOR ?? '') !== '' || !stream.isTTY) return PLAIN;
  // An empty NO_COLOR means colours (no-color.org); Node's check would count it as set.
  const { NO_COLOR: _empty, ...rest } = env;
  return stream.hasColors(rest) ? COLOURED : PLAIN;
}

/**
 * The width `stream` is laid out for, in columns: a terminal's own, DEFAULT_WIDTH (80) when it is
 * not a terminal (a pipe, a file) or does not say.
 */
export function terminalWidth(stream: NodeJS.WriteStream): number {
  return stream.isTTY && stream.columns > 0 ? stream.columns : DEFAULT_WIDTH;
}

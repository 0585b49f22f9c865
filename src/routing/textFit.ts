/**
 * Fitting the CLI's text to a terminal's width (`status`, `status --watch`, `simulate`, `report`):
 * a table wider than the width is split into blocks of columns printed one below the other, each
 * led by the table's first column (its key), so nothing is cut; a cell still too wide is
 * word-wrapped; a long line of prose is wrapped with a hanging indent. Widths count characters
 * (code points): the tables hold no double-width characters. Pure.
 */

/** The width assumed when the output is not a terminal, in columns. */
export const DEFAULT_WIDTH = 80;
/** The narrowest a wrapped column gets, in columns. */
const MIN_WRAP = 12;
/** Between two columns. */
const GAP = '  ';

const len = (s: string) => [...s].length;
const spaces = (n: number) => ' '.repeat(Math.max(0, n));

/**
 * `text` word-wrapped to `width` columns; the lines after the first start with `indent` spaces
 * (a hanging indent). A word longer than a line is cut. Trailing spaces are dropped.
 * @param width columns, at least `indent` + 1 (narrower is taken as that)
 */
export function wrapText(text: string, width: number, indent = 0): string[] {
  const hang = Math.max(0, Math.min(indent, width - 1));
  const out: string[] = [];
  let line = '';
  /** Whether `line` holds no word yet (only an indent). */
  let empty = true;
  const next = () => {
    out.push(line.trimEnd());
    line = spaces(hang);
    empty = true;
  };
  // Tokens keep the spaces before them, so text aligned with spaces stays aligned on its first line.
  for (const token of text.match(/\s*\S+/g) ?? [text]) {
    if (!empty && len(line) + len(token) > width) next();
    let chars = [...(empty && out.length ? token.trimStart() : token)];
    // A word longer than a line: as much of it as fits, the rest on the next.
    while (len(line) + chars.length > width) {
      const take = Math.max(1, width - len(line));
      line += chars.slice(0, take).join('');
      chars = chars.slice(take);
      next();
    }
    if (chars.length) {
      line += chars.join('');
      empty = false;
    }
  }
  if (!empty || out.length === 0) out.push(line.trimEnd());
  return out;
}

/**
 * Each line of `text` fitted to `width` (see wrapText); a wrapped line continues under its own
 * text: after its leading spaces and, for a list item (`- `) or a `label: ` head, after that too.
 */
export function wrapLines(lines: readonly string[], width: number): string[] {
  return lines.flatMap((l) => {
    if (len(l) <= width) return [l];
    const lead = /^(\s*)(- )?/.exec(l)!;
    const indent = lead[0].length || 2;
    return wrapText(l, width, Math.min(indent, Math.floor(width / 2)));
  });
}

/** How {@link fitTable} draws. */
export interface FitOptions {
  /** Right-aligned columns (by index; default none). */
  right?: ReadonlySet<number>;
  /** Colours a padded cell: `row` 0 is the header, `col` the column's index in the whole table. */
  paint?: (row: number, col: number, text: string) => string;
}

/**
 * `rows` (the first is the header) as aligned lines no wider than `width` where it can: the
 * columns after the first are laid out in blocks that fit, one below the other with a blank line
 * between, each led by the first column; a column too wide for a block of its own is word-wrapped.
 * @param width columns (e.g. process.stdout.columns, DEFAULT_WIDTH off a terminal)
 */
export function fitTable(rows: readonly (readonly string[])[], width: number, opts: FitOptions = {}): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => len(r[i]))));
  const blocks: number[][] = [];
  let block: number[] = [];
  let used = widths[0];
  for (let i = 1; i < widths.length; i++) {
    if (block.length && used + GAP.length + widths[i] > width) {
      blocks.push(block);
      block = [];
      used = widths[0];
    }
    block.push(i);
    used += GAP.length + widths[i];
  }
  if (block.length || blocks.length === 0) blocks.push(block);
  return blocks.flatMap((cols, b) => [...(b ? [''] : []), ...drawBlock(rows, [0, ...cols], widths, width, opts)]);
}

/** One block's lines: columns `cols` of `rows`; the last is wrapped when the block is too wide. */
function drawBlock(rows: readonly (readonly string[])[], cols: number[], widths: number[], width: number, opts: FitOptions): string[] {
  const last = cols[cols.length - 1];
  const before = cols.slice(0, -1).reduce((sum, c) => sum + widths[c] + GAP.length, 0);
  const lastWidth = Math.min(widths[last], Math.max(MIN_WRAP, width - before));
  const paint = opts.paint ?? ((_r: number, _c: number, t: string) => t);
  const pad = (text: string, c: number, w: number) => (opts.right?.has(c) ? spaces(w - len(text)) + text : text + spaces(w - len(text)));
  return rows.flatMap((r, row) => {
    const parts = lastWidth < widths[last] ? wrapText(r[last], lastWidth) : [r[last]];
    return parts.map((part, k) =>
      cols
        .map((c) => {
          const w = c === last ? lastWidth : widths[c];
          if (k > 0 && c !== last) return spaces(w);
          return paint(row, c, pad(c === last ? part : r[c], c, w));
        })
        .join(GAP)
        .trimEnd(),
    );
  });
}

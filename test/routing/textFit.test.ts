import { strict as assert } from 'node:assert';
import { fitTable, wrapLines, wrapText } from '../../src/routing/textFit';

describe('routing/textFit: text fitted to a terminal width', () => {
  it('wraps words with a hanging indent, keeps the first line’s alignment, cuts only a word longer than a line', () => {
    assert.deepEqual(wrapText('  work      goes here: its weekly allowance expires soonest', 30, 12), [
      '  work      goes here: its',
      '            weekly allowance',
      '            expires soonest',
    ]);
    assert.deepEqual(wrapText('abcdefghijkl mn', 5, 1), ['abcde', ' fghi', ' jkl', ' mn']);
    assert.deepEqual(wrapText('short', 80), ['short']);
    assert.deepEqual(wrapLines(['  - a list item that is long', 'ok'], 16), ['  - a list item', '    that is long', 'ok']);
  });

  it('splits a wide table into blocks of columns led by the first, keeping every cell; a single wide column is wrapped', () => {
    const rows = [
      ['name', 'first', 'second', 'note'],
      ['a', '1', '22', 'a note long enough to wrap'],
    ];
    const lines = fitTable(rows, 20, { right: new Set([1, 2]) });
    assert.deepEqual(lines, ['name  first  second', 'a         1      22', '', 'name  note', 'a     a note long', '      enough to wrap']);
    assert.ok(lines.every((l) => l.length <= 20));
    assert.deepEqual(fitTable(rows, 200), ['name  first  second  note', 'a     1      22      a note long enough to wrap']);
  });
});

import { strict as assert } from 'node:assert';
import type { StatusReport } from '../../../src/proxy/status/status';
import { accountTooltip, escapeMarkdown, poolTooltip } from '../../../src/proxy/status/tooltips';
import { accounts, callRouter, routerStatus, startHarness } from '../../support/routerHarness';

const LABEL = '[x](https://example.com) ![i](https://example.com/i.png)';
/** LABEL with every ASCII punctuation character backslash-escaped: CommonMark renders it as LABEL's text. */
const ESCAPED = '\\[x\\]\\(https\\:\\/\\/example\\.com\\) \\!\\[i\\]\\(https\\:\\/\\/example\\.com\\/i\\.png\\)';

/** Markdown constructs that render as something other than text, found unescaped in `md`. */
function activeSyntax(md: string): string[] {
  const unescaped = md.replace(/\\[!-/:-@[-`{-~]/g, '');
  return [/\]\(/, /!\[/, /https?:\/\//, /www\./, /<[a-z]/i, /\$\(/].filter((re) => re.test(unescaped)).map(String);
}

describe('tooltips: user- and upstream-supplied text renders as text', () => {
  it('escapes every ASCII punctuation character (links, images, HTML, bare URLs, emphasis, theme icons) and folds line breaks', () => {
    assert.equal(escapeMarkdown(LABEL), ESCAPED);
    assert.equal(escapeMarkdown('$(key) <img src=x> **b**\nnext'), '\\$\\(key\\) \\<img src\\=x\\> \\*\\*b\\*\\* next');
    assert.equal(escapeMarkdown('plain label 42'), 'plain label 42');
  });

  it('an account labelled with Markdown shows its label as text in the Accounts tooltip and the status bar tooltip', async () => {
    const h = await startHarness(accounts(LABEL, 'b'));
    try {
      await callRouter(h, { session: 's' });
      const s = (await routerStatus(h)) as StatusReport;
      const a = s.accounts.find((x) => x.label === LABEL)!;
      const now = Date.now();
      const account = accountTooltip(a, s, now);
      const pool = poolTooltip(s, ' — 2 of 2 accounts usable', 'serving at http://127.0.0.1:1', now);
      for (const md of [account, pool]) {
        assert.ok(md.includes(ESCAPED), md);
        assert.deepEqual(activeSyntax(md.replace(/^- \$\((pass|pass-filled|watch|warning|key|circle-slash)\) /gm, '- ')), [], md);
      }
      // The raw label would have been a link and an image (the check above bites).
      assert.deepEqual(activeSyntax(`**${LABEL}**`), ['/\\]\\(/', '/!\\[/', '/https?:\\/\\//']);
      // The status bar's own theme icons stay icons.
      assert.match(pool, /^- \$\((pass|pass-filled)\) \*\*\\\[x\\\]/m);
    } finally {
      await h.close();
    }
  });
});

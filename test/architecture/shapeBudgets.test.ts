/**
 * The shape budgets bite: `npm run lint` holds every file of src/ and bench/ to 400 lines, every
 * function to 80 and every parameter list to 5 (eslint.budgets.cjs; tests have larger limits),
 * and a file on the exception list to the size it has. The list holds only files still over a
 * default budget, each with its reason.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

// out/test/architecture → the repository root.
const ROOT = path.join(__dirname, '..', '..', '..');

interface Budget {
  maxLines: number;
  maxFunctionLines: number;
  maxParams: number;
}
interface BudgetsModule {
  SOURCE_BUDGETS: Budget;
  TEST_BUDGETS: Budget;
  BUDGET_EXCEPTIONS: Array<Partial<Budget> & { file: string; reason: string }>;
  budgetRules(b: Budget): Record<string, unknown>;
}

// A CommonJS module of the repository root, outside the compiled tree: loaded at run time.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadBudgets = async (): Promise<BudgetsModule> => require(path.join(ROOT, 'eslint.budgets.cjs')) as BudgetsModule;

/** The budget rules' messages for `text` linted as a TypeScript file under `budget`. */
async function budgetMessages(budgets: BudgetsModule, budget: Budget, text: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: ROOT, overrideConfigFile: true, overrideConfig: [{ files: ['**/*.js'], rules: budgets.budgetRules(budget) as never }] });
  const [result] = await eslint.lintText(text, { filePath: path.join(ROOT, 'budget-probe.js') });
  return result.messages.map((m) => m.ruleId ?? m.message);
}

/** A source text with `fileLines` lines holding one function of `functionLines` lines that takes `params` parameters. */
function probe(fileLines: number, functionLines: number, params: number): string {
  const args = Array.from({ length: params }, (_, i) => `p${i}`).join(', ');
  const body = Array.from({ length: functionLines - 2 }, (_, i) => `  void ${i};`);
  const fn = [`function f(${args}) {`, ...body, '}', 'void f;'];
  const filler = Array.from({ length: Math.max(0, fileLines - fn.length) }, (_, i) => `void ${i};`);
  return [...fn, ...filler].join('\n');
}

describe('shape budgets', function () {
  this.timeout(120_000);

  it('a file, a function or a parameter list past the source budget fails the lint; one at the budget passes', async () => {
    const budgets = await loadBudgets();
    const b = budgets.SOURCE_BUDGETS;
    assert.deepEqual(b, { maxLines: 400, maxFunctionLines: 80, maxParams: 5 });
    assert.deepEqual(await budgetMessages(budgets, b, probe(400, 80, 5)), []);
    assert.deepEqual((await budgetMessages(budgets, b, probe(401, 80, 5))).sort(), ['max-lines']);
    assert.deepEqual((await budgetMessages(budgets, b, probe(300, 81, 5))).sort(), ['max-lines-per-function']);
    assert.deepEqual((await budgetMessages(budgets, b, probe(300, 80, 6))).sort(), ['max-params']);
  });

  it('the repository lint applies them: the source budget to src/ and bench/, the test budget to test/, an exception at its own size', async () => {
    const budgets = await loadBudgets();
    const eslint = new ESLint({ cwd: ROOT });
    const rulesOf = async (file: string) => (await eslint.calculateConfigForFile(path.join(ROOT, file))) as { rules: Record<string, [number, Record<string, number>]> };
    const maxOf = (rules: Record<string, [number, Record<string, number>]>) => ({
      maxLines: rules['max-lines'][1].max,
      maxFunctionLines: rules['max-lines-per-function'][1].max,
      maxParams: rules['max-params'][1].max,
    });
    assert.deepEqual(maxOf((await rulesOf('src/proxy/engine.ts')).rules), budgets.SOURCE_BUDGETS);
    assert.deepEqual(maxOf((await rulesOf('bench/pool.ts')).rules), budgets.SOURCE_BUDGETS);
    assert.deepEqual(maxOf((await rulesOf('test/architecture/l10n.test.ts')).rules), budgets.TEST_BUDGETS);
    for (const e of budgets.BUDGET_EXCEPTIONS.slice(0, 3)) {
      const got = maxOf((await rulesOf(e.file)).rules);
      for (const k of ['maxLines', 'maxFunctionLines', 'maxParams'] as const) if (e[k] !== undefined) assert.equal(got[k], e[k], `${e.file} ${k}`);
    }
  });

  it('every exception names a file that exists and is still over a default budget, with its reason', async () => {
    const budgets = await loadBudgets();
    const stale: string[] = [];
    for (const e of budgets.BUDGET_EXCEPTIONS) {
      assert.ok(existsSync(path.join(ROOT, e.file)), `${e.file} does not exist`);
      assert.ok(e.reason.trim().length >= 10, `${e.file}: the reason it may exceed the budget is missing`);
      const base = e.file.startsWith('test/') ? budgets.TEST_BUDGETS : budgets.SOURCE_BUDGETS;
      const plain = new ESLint({
        cwd: ROOT,
        overrideConfigFile: true,
        overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules: budgets.budgetRules(base) as never }],
      });
      const [result] = await plain.lintFiles([path.join(ROOT, e.file)]);
      const over = new Set(result.messages.map((m) => m.ruleId));
      const listed = { maxLines: 'max-lines', maxFunctionLines: 'max-lines-per-function', maxParams: 'max-params' } as const;
      for (const [k, rule] of Object.entries(listed) as Array<[keyof typeof listed, string]>) if (e[k] !== undefined && !over.has(rule)) stale.push(`${e.file} ${k}`);
    }
    assert.deepEqual(stale, [], 'exceptions that no longer exceed the budget: take them off the list');
  });
});

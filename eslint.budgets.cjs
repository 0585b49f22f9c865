// Shape budgets, enforced by `npm run lint` (eslint.config.mjs applies them): so a feature cannot
// regrow a file or a function past what a reader can hold. See CONTRIBUTING.md, "Shape budgets".

/** The budgets of the product's code (src/) and the benchmarks (bench/): lines per file, lines per function (comments and blank lines count), parameters. */
const SOURCE_BUDGETS = { maxLines: 400, maxFunctionLines: 80, maxParams: 5 };

/** Tests read as whole scenarios inside one `describe` callback: larger limits, the same rule. */
const TEST_BUDGETS = { maxLines: 800, maxFunctionLines: 400, maxParams: 8 };

/**
 * Files over a budget, each held at the size it has (it may shrink, never grow), with the reason
 * it is allowed. `test/architecture/shapeBudgets.test.ts` fails when an entry no longer exceeds
 * the default budget (take it off the list) or has no reason. Keys: `maxLines` (the file),
 * `maxFunctionLines` (its longest function), `maxParams` (its longest parameter list).
 * @type {Array<{ file: string, maxLines?: number, maxFunctionLines?: number, maxParams?: number, reason: string }>}
 */
const BUDGET_EXCEPTIONS = [
  { file: 'bench/hotpath.ts', maxFunctionLines: 136, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'bench/run.ts', maxParams: 6, maxLines: 859, maxFunctionLines: 116, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/cli/accountEdits.ts', maxFunctionLines: 92, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/cli/accountsCommand.ts', maxFunctionLines: 92, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/cli/accountsProgram.ts', maxFunctionLines: 125, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/cli/runtime.ts', maxFunctionLines: 170, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/proxy/pipeline/attempt.ts', maxFunctionLines: 169, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/proxy/pipeline/plan.ts', maxParams: 7, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/proxy/pipeline/tryAccount.ts', maxFunctionLines: 114, maxParams: 7, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/proxy/pipeline/warmUp.ts', maxParams: 7, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/proxy/relay/streamRelay.ts', maxParams: 6, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/proxy/state/persistence.ts', maxFunctionLines: 130, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/proxy/state/sharedState.ts', maxFunctionLines: 243, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/proxy/upstream/call.ts', maxFunctionLines: 120, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/routing/plan.ts', maxParams: 11, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/routing/planner/modify.ts', maxFunctionLines: 98, maxParams: 8, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/sim/endpoints/messages.ts', maxFunctionLines: 125, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/sim/oauth.ts', maxParams: 6, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/vscode/accountCommands.ts', maxFunctionLines: 123, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/webview/charts.ts', maxParams: 6, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/whatif/generate.ts', maxFunctionLines: 95, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/whatif/simulate.ts', maxFunctionLines: 133, maxParams: 6, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'src/whatif/world.ts', maxParams: 6, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'test/vscode/suite/extension.test.ts', maxFunctionLines: 503, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
  { file: 'test/vscode/ui.test.ts', maxFunctionLines: 466, reason: 'over the budget when the budgets landed; to be split by the house step (issue 30)' },
];

/** The ESLint rule settings of a budget. */
function budgetRules(b) {
  return {
    'max-lines': ['error', { max: b.maxLines, skipBlankLines: false, skipComments: false }],
    'max-lines-per-function': ['error', { max: b.maxFunctionLines, skipBlankLines: false, skipComments: false, IIFEs: true }],
    'max-params': ['error', { max: b.maxParams }],
  };
}

/** The flat-config entries that apply the budgets, the exceptions last (a later entry wins). */
function budgetConfigs() {
  return [
    { files: ['src/**/*.ts', 'bench/**/*.ts'], rules: budgetRules(SOURCE_BUDGETS) },
    { files: ['test/**/*.ts'], rules: budgetRules(TEST_BUDGETS) },
    ...BUDGET_EXCEPTIONS.map((e) => {
      const base = e.file.startsWith('test/') ? TEST_BUDGETS : SOURCE_BUDGETS;
      return {
        files: [e.file],
        rules: budgetRules({
          maxLines: e.maxLines ?? base.maxLines,
          maxFunctionLines: e.maxFunctionLines ?? base.maxFunctionLines,
          maxParams: e.maxParams ?? base.maxParams,
        }),
      };
    }),
  ];
}

module.exports = { SOURCE_BUDGETS, TEST_BUDGETS, BUDGET_EXCEPTIONS, budgetRules, budgetConfigs };

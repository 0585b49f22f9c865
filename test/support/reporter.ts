/**
 * Mocha's spec reporter plus one closing line, `N passed, N failed`, in the
 * plain form any CI log reader understands.
 */
import * as Mocha from 'mocha';

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const s = runner.stats;
      process.stdout.write(`\n${s?.passes ?? 0} passed, ${s?.failures ?? 0} failed${s?.pending ? `, ${s.pending} skipped` : ''}\n`);
    });
  }
}

export = SpecWithSummary;

/**
 * How the request path runs its steps: in order, synchronously until a step
 * has to wait, so a request answered locally costs no promise and a forwarded
 * one costs one for the rest of its way.
 */
import type { RequestContext } from './context';

/**
 * One step of the request path: it reads and fills the request's context. It returns true when
 * the request is finished (answered, or the client gone) and no later step may run, or a
 * promise of that when it waits (reading the body, calling upstream).
 * @throws whatever went wrong unhandled; the engine logs it and answers 500
 */
export type Step = (ctx: RequestContext) => boolean | void | Promise<boolean | void>;

/** Runs `steps` on `ctx`: undefined when they all ran synchronously, else the promise of the rest. */
export function runSteps(steps: readonly Step[], ctx: RequestContext): Promise<void> | void {
  for (let i = 0; i < steps.length; i++) {
    const done = steps[i](ctx);
    if (done === true) return;
    if (done) return finishSteps(steps, ctx, done, i + 1);
  }
}

async function finishSteps(steps: readonly Step[], ctx: RequestContext, waiting: Promise<boolean | void>, next: number): Promise<void> {
  if (await waiting) return;
  for (let i = next; i < steps.length; i++) {
    const done = steps[i](ctx);
    if (done === true || (done && (await done))) return;
  }
}

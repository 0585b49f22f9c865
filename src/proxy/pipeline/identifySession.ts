/**
 * Step 4: the request's model, sticky key (src/routing/identify.ts: only its hash leaves this
 * step) and stream flag, read from the head and the body (`models` requests carry none); a
 * body that had to be parsed and is not a JSON object is refused with 400. A parse counts against
 * the body budget (the text and tree beside the body) until the body is released; when the budget
 * has no room for it the request gets the budget's 503. Claude Code's hint headers (class, prompt
 * and agent ids, the compaction flag) are read here too: src/routing/requestClass.ts.
 */
import { hintIdHash, requestClassOf } from '../../routing/requestClass';
import { inspectHead, MalformedBodyError, parseRequest, parseRoomFor } from '../http/requestInfo';
import { sendAnthropicError } from '../relay/clientAnswer';
import type { RequestContext } from './context';
import { refuseForBudget } from './readRequestBody';

/** True when the request was answered here (400, or 503 when the budget has no room for the parse). */
export function identifySession(ctx: RequestContext): boolean {
  if (ctx.route === 'models') return false;
  readHints(ctx);
  const fingerprint = ctx.generation.config.policy.sessionFingerprint;
  const quick = inspectHead(ctx.head.sessionId, ctx.body, fingerprint);
  if (quick !== undefined) {
    ctx.info = quick;
    return false;
  }
  const limit = ctx.generation.config.policy.maxBufferedBodyBytes;
  if (!ctx.body.takeParseRoom(parseRoomFor(ctx.body.length, limit), limit)) {
    ctx.body.release();
    refuseForBudget(ctx);
    return true;
  }
  try {
    ctx.info = parseRequest(ctx.head.sessionId, ctx.body, fingerprint);
    return false;
  } catch (err) {
    if (!(err instanceof MalformedBodyError)) throw err;
    ctx.body.release();
    sendAnthropicError(ctx.res, 400, 'invalid_request_error', err.message);
    return true;
  }
}

/** The request's class, its prompt and agent ids' hashes and the compaction flag, from the head (nothing is allocated without hint headers). */
function readHints(ctx: RequestContext): void {
  const head = ctx.head;
  if (head.requestClass !== undefined) ctx.requestClass = requestClassOf(head.requestClass);
  if (head.promptId !== undefined) ctx.promptIdHash = hintIdHash(head.promptId, 'prompt');
  if (head.agentId !== undefined) ctx.agentIdHash = hintIdHash(head.agentId, 'agent');
  if (head.contextCompacted !== undefined) ctx.contextCompacted = head.contextCompacted.trim() !== '';
}

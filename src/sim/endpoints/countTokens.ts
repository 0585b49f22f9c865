/** `POST /v1/messages/count_tokens`: the prompt's token estimate; never charges a window. */
import type { Exchange } from '../http';
import { promptTokensOf } from '../promptCache';
import type { SimHost } from './host';
import { accountHeaders, authenticate, parseMessagesBody } from './request';

/** Answers one count_tokens request (`buf` is the raw body). */
export function countTokens(host: SimHost, ex: Exchange, buf: Buffer): void {
  const auth = authenticate(host, ex, true);
  if (!auth.ok) return;
  const body = parseMessagesBody(host, ex, buf);
  if (!body) return;
  ex.json(200, { input_tokens: promptTokensOf(body) }, accountHeaders(auth.account));
}

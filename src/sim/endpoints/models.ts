/** `GET /v1/models`: the sim's model list. */
import type { Exchange } from '../http';
import { modelsListBody } from '../models';
import type { SimHost } from './host';
import { accountHeaders, authenticate } from './request';

/** Answers one models-list request. */
export function models(host: SimHost, ex: Exchange): void {
  const auth = authenticate(host, ex, true);
  if (!auth.ok) return;
  ex.json(200, modelsListBody(), accountHeaders(auth.account));
}

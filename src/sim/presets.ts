/** Ready-made account specs for the fake upstream. */
import type { SimAccountSpec } from './types';

/** `n` OAuth account specs labelled `acct1`…`acctN` with deterministic tokens. */
export function simAccounts(n: number, extra: Partial<SimAccountSpec> = {}): SimAccountSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    label: `acct${i + 1}`,
    accessToken: `sk-ant-oat01-sim-acct${i + 1}-0`,
    refreshToken: `sk-ant-ort01-sim-acct${i + 1}-0`,
    ...extra,
  }));
}

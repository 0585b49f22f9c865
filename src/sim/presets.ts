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

/** The demo's simulated accounts: different fill levels so the ranking has something to decide. */
export const DEMO_ACCOUNTS: SimAccountSpec[] = [
  {
    label: 'work',
    accessToken: 'sk-ant-oat01-demo-work',
    refreshToken: 'sk-ant-ort01-demo-work',
    initialFiveHourUsed: 0.35,
    initialSevenDayUsed: 0.62,
    sevenDayResetInMs: 2 * 86_400_000,
  },
  {
    label: 'personal',
    accessToken: 'sk-ant-oat01-demo-personal',
    refreshToken: 'sk-ant-ort01-demo-personal',
    initialFiveHourUsed: 0.1,
    initialSevenDayUsed: 0.2,
    sevenDayResetInMs: 5 * 86_400_000,
  },
  {
    label: 'team',
    accessToken: 'sk-ant-oat01-demo-team',
    refreshToken: 'sk-ant-ort01-demo-team',
    initialFiveHourUsed: 0.8,
    initialSevenDayUsed: 0.4,
    sevenDayResetInMs: 3 * 86_400_000,
  },
];

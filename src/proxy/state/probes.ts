/**
 * The probe table: each account's probe record (src/routing/probe.ts) — is a probe in flight,
 * how many failed, when the next may start. Not saved: after a restart every account may be
 * re-checked at once. A probe is taken as a ticket and ended exactly once by whoever took it.
 */
import { mayProbe, probeEnded, probeStarted, type ProbeRecord, type ProbeUse } from '../../routing/probe';

/** One probe in flight. */
export interface ProbeTicket {
  readonly account: string;
  readonly kind: ProbeUse;
  /**
   * Ends the probe at `nowMs` (epoch ms): `ok` true forgets the account's failures, false backs
   * the next probe off, undefined (never reached the account) only frees the slot. Later calls do nothing.
   */
  end(ok: boolean | undefined, nowMs: number): void;
}

export class ProbeTable {
  private readonly records = new Map<string, ProbeRecord>();

  constructor(private readonly onChange: () => void = () => undefined) {}

  /** Whether `account` may take a probe at `nowMs` (epoch ms): none in flight, back-off over. */
  may(account: string, nowMs: number): boolean {
    return mayProbe(this.records.get(account), nowMs);
  }

  /** The account's record (undefined: never probed, or its last probe succeeded). */
  record(account: string): Readonly<ProbeRecord> | undefined {
    return this.records.get(account);
  }

  /** Starts a probe of `account`, or undefined when one is in flight or its back-off is not over. */
  begin(account: string, kind: ProbeUse, nowMs: number): ProbeTicket | undefined {
    if (!this.may(account, nowMs)) return undefined;
    this.records.set(account, probeStarted(this.records.get(account)));
    this.onChange();
    let ended = false;
    return {
      account,
      kind,
      end: (ok, endMs) => {
        if (ended) return;
        ended = true;
        const next = probeEnded(this.records.get(account), ok, endMs);
        if (next) this.records.set(account, next);
        else this.records.delete(account);
        this.onChange();
      },
    };
  }

  /** Forgets `account`'s failures and back-off (a person reset its cooldown, or it was removed); a probe in flight keeps its slot. */
  forget(account: string): void {
    const r = this.records.get(account);
    if (!r) return;
    if (r.inFlight) this.records.set(account, { inFlight: true, failures: 0, notBeforeMs: 0 });
    else this.records.delete(account);
    this.onChange();
  }
}

/**
 * Tokens of the fake accounts and the OAuth token endpoint's grants (refresh and
 * authorization_code). Refresh tokens rotate on every grant; the previous access and refresh
 * tokens stop working at once.
 */
import { simUuid, tokenSafe } from './ids';

/** Default access-token lifetime, ms (8 h). */
export const DEFAULT_ACCESS_TOKEN_TTL_MS = 8 * 60 * 60 * 1000;
/** Scope string the sim grants. */
export const SIM_SCOPE = 'user:inference user:profile';

/** Body of a successful token-endpoint answer (`expires_in` in SECONDS). */
export interface TokenGrant {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: 'Bearer';
  scope: string;
  account: { uuid: string; email_address: string };
  organization: { uuid: string; name: string };
}

/** Outcome of checking a credential. */
export type CredentialCheck =
  | { ok: true; label: string }
  /** `unknown`: not a token of this kind; `expired`: made expired by a fault or its TTL; `superseded`: replaced by a newer grant. */
  | { ok: false; label: string | null; reason: 'unknown' | 'expired' | 'superseded'; byFault: boolean };

interface LabelTokens {
  apiKey: boolean;
  ttlMs: number;
  accessToken: string;
  refreshToken?: string;
  /** Access token expiry, epoch ms. */
  accessExpiresAtMs: number;
  /** Set by the expire_token fault. */
  expiredByFault: boolean;
  issued: number;
  refreshCount: number;
  /** Refresh grants refused because the refresh token was superseded (a spent token sent again). */
  spentRefreshes: number;
}

/** All credentials of the sim. */
export class TokenRegistry {
  private readonly byLabel = new Map<string, LabelTokens>();
  /** Every token ever valid → owning label (superseded ones stay so 401s can name the account). */
  private readonly owner = new Map<string, { label: string; kind: 'access' | 'refresh' | 'apiKey' }>();

  /** Register an account's initial credentials at `nowMs`. Throws on a duplicate label or token. */
  add(label: string, accessToken: string, refreshToken: string | undefined, apiKey: boolean, ttlMs: number, nowMs: number): void {
    if (this.byLabel.has(label)) throw new Error(`duplicate account label ${label}`);
    for (const t of [accessToken, refreshToken]) if (t !== undefined && this.owner.has(t)) throw new Error(`duplicate token for account ${label}`);
    this.byLabel.set(label, { apiKey, ttlMs, accessToken, refreshToken, accessExpiresAtMs: nowMs + ttlMs, expiredByFault: false, issued: 0, refreshCount: 0, spentRefreshes: 0 });
    this.owner.set(accessToken, { label, kind: apiKey ? 'apiKey' : 'access' });
    if (refreshToken !== undefined) this.owner.set(refreshToken, { label, kind: 'refresh' });
  }

  private get(label: string): LabelTokens {
    const t = this.byLabel.get(label);
    if (!t) throw new Error(`unknown account ${label}`);
    return t;
  }

  /** Check an `x-api-key` value. */
  checkApiKey(key: string): CredentialCheck {
    const o = this.owner.get(key);
    if (!o || o.kind !== 'apiKey') return { ok: false, label: null, reason: 'unknown', byFault: false };
    return { ok: true, label: o.label };
  }

  /** Check a bearer access token at `nowMs`; TTL expiry counts only when `enforceExpiry`. */
  checkAccess(token: string, nowMs: number, enforceExpiry: boolean): CredentialCheck {
    const o = this.owner.get(token);
    if (!o || o.kind !== 'access') return { ok: false, label: null, reason: 'unknown', byFault: false };
    const t = this.get(o.label);
    if (t.accessToken !== token) return { ok: false, label: o.label, reason: 'superseded', byFault: false };
    if (t.expiredByFault) return { ok: false, label: o.label, reason: 'expired', byFault: true };
    if (enforceExpiry && nowMs >= t.accessExpiresAtMs) return { ok: false, label: o.label, reason: 'expired', byFault: false };
    return { ok: true, label: o.label };
  }

  /** Fault: the current access token of `label` is expired until the next grant. */
  expire(label: string): void {
    this.get(label).expiredByFault = true;
  }

  /** Undo {@link expire}. */
  unexpire(label: string): void {
    this.get(label).expiredByFault = false;
  }

  /** Current credentials of `label`. */
  current(label: string): { accessToken: string; refreshToken?: string } {
    const t = this.get(label);
    return t.refreshToken === undefined ? { accessToken: t.accessToken } : { accessToken: t.accessToken, refreshToken: t.refreshToken };
  }

  /** Successful refresh grants of `label`. */
  refreshCount(label: string): number {
    return this.get(label).refreshCount;
  }

  /** Refresh grants of `label` refused because the refresh token sent was already spent (rotated away). */
  spentRefreshes(label: string): number {
    return this.get(label).spentRefreshes;
  }

  /** `grant_type=refresh_token`: rotate both tokens if `refreshToken` is the current one, else null. */
  refreshGrant(refreshToken: string, nowMs: number): { label: string; grant: TokenGrant } | null {
    const o = this.owner.get(refreshToken);
    if (!o || o.kind !== 'refresh') return null;
    const t = this.get(o.label);
    if (t.refreshToken !== refreshToken) {
      t.spentRefreshes += 1;
      return null;
    }
    t.refreshCount += 1;
    return { label: o.label, grant: this.issue(o.label, nowMs) };
  }

  /** `grant_type=authorization_code` with code `sim-code-<label>`: fresh tokens for that label, else null. */
  codeGrant(code: string, nowMs: number): { label: string; grant: TokenGrant } | null {
    const m = /^sim-code-(.+)$/.exec(code);
    if (!m || !this.byLabel.has(m[1]) || this.get(m[1]).apiKey) return null;
    return { label: m[1], grant: this.issue(m[1], nowMs) };
  }

  private issue(label: string, nowMs: number): TokenGrant {
    const t = this.get(label);
    const safe = tokenSafe(label);
    let access: string;
    let refresh: string;
    do {
      t.issued += 1;
      access = `sk-ant-oat01-sim-${safe}-${t.issued}`;
      refresh = `sk-ant-ort01-sim-${safe}-${t.issued}`;
    } while (this.owner.has(access) || this.owner.has(refresh));
    t.accessToken = access;
    t.refreshToken = refresh;
    t.accessExpiresAtMs = nowMs + t.ttlMs;
    t.expiredByFault = false;
    this.owner.set(access, { label, kind: 'access' });
    this.owner.set(refresh, { label, kind: 'refresh' });
    return {
      access_token: access,
      refresh_token: refresh,
      expires_in: Math.floor(t.ttlMs / 1000),
      token_type: 'Bearer',
      scope: SIM_SCOPE,
      account: { uuid: simUuid(`account:${label}`), email_address: `${safe}@sim.invalid` },
      organization: { uuid: simUuid(`org:${label}`), name: `Sim org ${label}` },
    };
  }
}

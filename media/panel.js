// Claude Router status panel. Renders the data the extension posts; builds the
// DOM with textContent only (nothing from the proxy is ever parsed as HTML).
(function () {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById('root');
  let last = null;

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      // Through the CSSOM: the panel's CSP blocks style attributes (every bar was drawn full width).
      else if (k === 'style') e.style.cssText = v;
      else e.setAttribute(k, v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }
  const pct = (f) => (f === null || f === undefined ? '?' : Math.round(f * 100) + '%');
  // The rules of formatDuration in src/quota/duration.ts (the webview loads this file as it is,
  // so it cannot import it): each unit truncated, days and hours from two days on.
  function dur(ms) {
    if (ms === null || ms === undefined || !isFinite(ms)) return '-';
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + ' s';
    const m = Math.floor(s / 60);
    if (m < 60) return m + ' min';
    const h = Math.floor(m / 60);
    if (h < 48) return h + ' h' + (m % 60 ? ' ' + (m % 60) + ' min' : '');
    return Math.floor(h / 24) + ' d' + (h % 24 ? ' ' + (h % 24) + ' h' : '');
  }
  const until = (iso, now) => (iso ? dur(Date.parse(iso) - now) : '-');

  function bar(label, used, resetsAt, now) {
    const width = used === null || used === undefined ? 0 : Math.min(100, Math.round(used * 100));
    const level = used >= 0.97 ? 'full' : used >= 0.8 ? 'high' : 'ok';
    return el(
      'div',
      { class: 'bar-row' },
      el('span', { class: 'bar-label' }, label),
      el(
        'span',
        { class: 'bar', role: 'meter', 'aria-valuenow': String(width), 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-label': label + ' used' },
        el('span', { class: 'fill ' + level, style: 'width:' + width + '%' }),
      ),
      el('span', { class: 'bar-text' }, pct(used) + ' · resets in ' + until(resetsAt, now)),
    );
  }

  // The empty pool offers its next steps; a button asks the extension to run one of them.
  function action(label, command, primary) {
    const b = el('button', { type: 'button', class: primary ? 'action primary' : 'action', 'data-command': command }, label);
    b.addEventListener('click', () => vscode.postMessage({ type: 'run', command }));
    return b;
  }
  function emptyPool() {
    return el(
      'div',
      { class: 'empty-pool' },
      el('p', {}, 'No accounts yet. The router sends each Claude Code request to one of your accounts.'),
      el(
        'div',
        { class: 'actions' },
        action('Sign In with Claude', 'signIn', true),
        action("Import Claude Code's Login", 'importClaudeCodeLogin'),
        action('Add Account from Token', 'addToken'),
      ),
      el('p', { class: 'muted' }, 'No account at hand? Watch it route between simulated accounts:'),
      el('div', { class: 'actions' }, action('Try with Simulated Accounts', 'trySimulated')),
    );
  }

  function render(d) {
    last = d;
    const now = Date.now();
    const s = d.status;
    const parts = [];
    parts.push(el('h1', {}, 'Claude Router', d.simulated ? el('span', { class: 'badge sim' }, 'simulated accounts') : null));
    if (d.error) parts.push(el('p', { class: 'error' }, d.error));
    if (d.settingsError) parts.push(el('p', { class: 'error' }, 'Settings rejected (the last good policy stays in force): ' + d.settingsError));
    if (!s) {
      root.replaceChildren(...parts);
      return;
    }
    parts.push(
      el(
        'p',
        { class: 'muted' },
        (d.role === 'leader' ? 'This window serves the proxy. ' : d.role === 'follower' ? 'Another window serves the proxy. ' : '') +
          d.summary.usable +
          ' of ' +
          d.summary.total +
          ' accounts usable · ' +
          s.boundSessions +
          ' bound sessions · ' +
          s.inflight +
          ' in flight · ' +
          s.counters.requests +
          ' requests, ' +
          s.counters.failovers +
          ' failovers',
      ),
    );

    // Policy with sources.
    const p = s.policy;
    const src = s.config.sources || {};
    const rows = [
      ['strategy', p.strategy],
      ['account-ranking', p.accountRanking],
      ['prefer-primary', p.preferPrimary],
      ['primary-account', p.primaryAccount || '—'],
      ['session-affinity', p.sessionAffinity],
      ['session-fingerprint', p.sessionFingerprint],
      ['session-affinity-idle-ttl-ms', p.sessionAffinityIdleTtlMs],
      ['spill-inflight', p.spillInflight],
      ['max-inflight-per-account', p.maxInflightPerAccount],
      ['session-soft-limit', p.sessionSoftLimit],
      ['session-reset-tolerance-ms', p.sessionResetToleranceMs],
      ['allow-overage', p.allowOverage],
      ['quota-routing', p.quotaRouting],
    ];
    parts.push(
      el(
        'section',
        { id: 'policy' },
        el('h2', {}, 'Policy'),
        el(
          'table',
          {},
          el('thead', {}, el('tr', {}, el('th', {}, 'key'), el('th', {}, 'value'), el('th', {}, 'source'))),
          el(
            'tbody',
            {},
            rows.map(([k, v]) => el('tr', {}, el('td', {}, k), el('td', {}, String(v)), el('td', { class: 'muted' }, src[k] || 'default'))),
          ),
        ),
        el('p', { class: 'muted' }, 'Configuration generation ' + s.config.generation + (s.config.lastReloadError ? ' · last reload rejected: ' + s.config.lastReloadError : '')),
      ),
    );

    // Accounts.
    parts.push(
      el(
        'section',
        { id: 'accounts' },
        el('h2', {}, 'Accounts'),
        s.accounts.length === 0 ? emptyPool() : null,
        s.accounts.map((a) => {
          const state = d.states[a.label];
          const v = s.preview.verdicts.find((x) => x.account === a.label);
          return el(
            'div',
            { class: 'account ' + state, 'data-account': a.label },
            el(
              'div',
              { class: 'account-head' },
              el('strong', {}, a.label),
              el('span', { class: 'badge ' + state }, state.replace(/_/g, ' ')),
              a.primary ? el('span', { class: 'badge' }, 'primary') : null,
              a.fallback ? el('span', { class: 'badge' }, 'fallback') : null,
              el('span', { class: 'muted' }, ' in flight ' + a.inflight + ' · sessions ' + a.boundSessions),
            ),
            a.status ? el('p', { class: 'status-line' }, 'Status: ' + a.status + ' · eligibility for a new request: ' + ((d.eligibility && d.eligibility[a.label]) || '-')) : null,
            bar('5 h', a.session.used, a.session.resetsAt, now),
            bar('7 d', a.weekly.used, a.weekly.resetsAt, now),
            Object.entries(a.scoped).map(([f, w]) => bar('7 d ' + f, w.used, w.resetsAt, now)),
            a.coolingUntil ? el('p', { class: 'warn' }, 'Cooling down (' + (a.coolingReason || '').replace(/_/g, ' ') + ') for ' + until(a.coolingUntil, now)) : null,
            a.needsSignIn ? el('p', { class: 'warn' }, 'Needs sign-in: ' + (a.needsSignInReason || '')) : null,
            d.why && d.why[a.label]
              ? el('p', { class: 'why' }, d.why[a.label])
              : v
                ? el(
                    'p',
                    { class: 'why' },
                    v.verdict === 'selected'
                      ? 'Next request goes here: ' + d.reasons[v.reason]
                      : (v.verdict === 'unusable' ? 'Not usable: ' : 'Ranked #' + (v.rank + 1) + ': ') + d.reasons[v.reason],
                  )
                : null,
          );
        }),
      ),
    );

    // Sessions.
    parts.push(
      el(
        'section',
        { id: 'sessions' },
        el('h2', {}, 'Bound sessions (' + s.sessions.length + ')'),
        s.sessions.length === 0
          ? el('p', { class: 'muted' }, p.sessionAffinity ? 'None yet.' : 'Session affinity is off.')
          : el(
              'table',
              {},
              el('thead', {}, el('tr', {}, el('th', {}, 'session'), el('th', {}, 'account'), el('th', {}, 'idle expiry in'))),
              el(
                'tbody',
                {},
                s.sessions.slice(0, 50).map((x) => el('tr', {}, el('td', { class: 'mono' }, x.sessionId.slice(0, 8)), el('td', {}, x.account), el('td', {}, dur(x.idleLeftMs)))),
              ),
            ),
      ),
    );

    // Decisions.
    parts.push(
      el(
        'section',
        { id: 'decisions' },
        el('h2', {}, 'Last decisions'),
        d.decisions.length === 0
          ? el('p', { class: 'muted' }, 'No requests yet.')
          : d.decisions.map((r, i) =>
              el(
                'details',
                { class: 'decision' },
                el(
                  'summary',
                  {},
                  el('span', { class: 'mono' }, r.ts.slice(11, 19)),
                  ' ',
                  el('strong', {}, r.servedBy || 'none'),
                  ' · ' +
                    (d.reasons[r.selectionReason] || r.selectionReason) +
                    ' · ' +
                    r.outcome +
                    (r.stickyKeyHash ? ' · ' + r.stickyKind + ' ' + r.stickyKeyHash.slice(0, 8) : '') +
                    (r.attempts.length > 1 ? ' · ' + r.attempts.length + ' attempts' : ''),
                ),
                el(
                  'table',
                  {},
                  el('thead', {}, el('tr', {}, el('th', {}, '#'), el('th', {}, 'account'), el('th', {}, 'verdict'), el('th', {}, 'why'), el('th', {}, '5h'), el('th', {}, '7d'))),
                  el(
                    'tbody',
                    {},
                    r.candidates.map((c, ci) =>
                      el(
                        'tr',
                        { class: c.verdict },
                        el('td', {}, String(c.rank + 1)),
                        el('td', {}, c.account),
                        el('td', {}, c.verdict.replace(/_/g, ' ')),
                        el('td', {}, (d.verdictTexts && d.verdictTexts[i] && d.verdictTexts[i][ci]) || d.reasons[c.reason] || c.reason),
                        el('td', {}, pct(c.metrics.sessionUsed)),
                        el('td', {}, pct(c.metrics.weeklyUsed)),
                      ),
                    ),
                  ),
                ),
                r.attempts.length
                  ? el('p', { class: 'muted' }, 'Attempts: ' + r.attempts.map((a) => a.account + ' → ' + a.result + (a.status ? ' (' + a.status + ')' : '')).join(', '))
                  : null,
              ),
            ),
      ),
    );

    // Seed metrics.
    const rep = d.report;
    parts.push(
      el(
        'section',
        { id: 'metrics' },
        el('h2', {}, 'Routing metrics (last ' + rep.decisions + ' decisions)'),
        el(
          'table',
          {},
          el(
            'tbody',
            {},
            el(
              'tr',
              {},
              el('td', {}, 'mid-session switches'),
              el('td', {}, rep.midSessionSwitches + ' (' + rep.switchesPer1000SessionRequests.toFixed(1) + ' per 1,000 session requests)'),
            ),
            el('tr', {}, el('td', {}, 'A→B→A ping-pong within 5 min'), el('td', {}, String(rep.pingPongPairs))),
            el('tr', {}, el('td', {}, 'cache-creation tokens on switches'), el('td', {}, String(rep.switchCacheCreationTokens))),
            el('tr', {}, el('td', {}, 'time with ≤ 1 usable account'), el('td', {}, (rep.shareTimeAtMostOneUsable * 100).toFixed(1) + '%')),
            el('tr', {}, el('td', {}, 'fallback share'), el('td', {}, (rep.fallbackShare * 100).toFixed(1) + '%')),
            el(
              'tr',
              {},
              el('td', {}, 'by selection reason'),
              el(
                'td',
                {},
                Object.entries(rep.bySelectionReason)
                  .map(([k, v]) => k + ' ' + v)
                  .join(', ') || '—',
              ),
            ),
          ),
        ),
      ),
    );
    root.replaceChildren(...parts);
  }

  window.addEventListener('message', (e) => {
    if (e.data && e.data.type === 'update') render(e.data);
  });
  // Countdowns move without new data.
  setInterval(() => {
    if (last) render(last);
  }, 30000);
  vscode.postMessage({ type: 'ready' });
})();

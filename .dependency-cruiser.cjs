// The layers of src/ (one folder each) and what each may import, checked by `npm run check:deps`:
//   quota/ → nothing of the product; routing/ → quota/; accounts/ → quota/, routing/;
//   config/ → routing/, quota/; store/ (the shared Redis store) → accounts/, config/, quota/, routing/;
//   proxy/ → the five above; cli/ → all but vscode/; vscode/ → all;
//   sim/ → none of them, imported only by cli/, vscode/ and whatif/ (its pure world model);
//   whatif/ → routing/, quota/ and sim/'s world model; webview/ (the panel's page) → quota/, and types. routing/, quota/ and whatif/ do no I/O; only
//   vscode/ imports `vscode`; no import cycles, type-only imports included; the Redis client is loaded on demand only.
// Tests and benchmarks are not layered, but take part in the cycle check.
// test/architecture/dependencyRules.test.ts proves that each rule bites.

/** Node core modules and packages that do I/O or read the machine, its clock or timers: none in the pure layers. */
const IMPURE_MODULES = [
  '^(node:)?(fs|fs/promises|http|https|http2|net|tls|dgram|dns|dns/promises|child_process|cluster|worker_threads|readline|readline/promises|inspector|repl|tty|v8|vm|os|process|perf_hooks|timers|timers/promises|async_hooks)$',
  '(^|/)node_modules/(undici|proper-lockfile|vscode)/',
  '(^|/)node_modules/@types/vscode/',
  '^(undici|proper-lockfile|vscode)$',
];
/** The simulator's pure world model, the only part of sim/ the what-if simulator may use. */
const SIM_WORLD_MODEL = '^src/sim/(windows|promptCache)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles anywhere, type-only imports included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'quota-imports-nothing-of-the-product',
      severity: 'error',
      comment: 'quota/ parses and classifies evidence; it depends on no other layer.',
      from: { path: '^src/quota/' },
      to: { path: '^src/', pathNot: '^src/quota/' },
    },
    {
      name: 'routing-imports-only-quota',
      severity: 'error',
      comment: 'routing/ (the pure planner) may import quota/ and nothing else of the product.',
      from: { path: '^src/routing/' },
      to: { path: '^src/', pathNot: '^src/(routing|quota)/' },
    },
    {
      name: 'routing-and-quota-are-pure',
      severity: 'error',
      comment: 'routing/ and quota/ are functions of their inputs and a clock argument: no I/O, timers or machine state.',
      from: { path: '^src/(routing|quota)/' },
      to: { path: IMPURE_MODULES },
    },
    {
      name: 'accounts-imports-only-quota-and-routing',
      severity: 'error',
      comment: 'accounts/ may import quota/ and routing/.',
      from: { path: '^src/accounts/' },
      to: { path: '^src/', pathNot: '^src/(accounts|quota|routing)/' },
    },
    {
      name: 'config-imports-only-routing-and-quota',
      severity: 'error',
      comment: 'config/ turns YAML and settings into a policy snapshot: it may import routing/ and quota/.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(config|routing|quota)/' },
    },
    {
      name: 'store-imports-only-accounts-config-quota-routing',
      severity: 'error',
      comment: 'store/ (the Redis store several routers share) may import accounts/, config/, quota/ and routing/; proxy/ and the shells build on it.',
      from: { path: '^src/store/' },
      to: { path: '^src/', pathNot: '^src/(store|accounts|config|quota|routing)/' },
    },
    {
      name: 'proxy-not-to-shells-sim-or-whatif',
      severity: 'error',
      comment: 'proxy/ may import quota/, routing/, accounts/ and config/, never the shells (cli/, vscode/), sim/ or whatif/.',
      from: { path: '^src/proxy/' },
      to: { path: '^src/(cli|vscode|sim|whatif)/' },
    },
    {
      name: 'proxy-http-below-the-pipeline',
      severity: 'error',
      comment: 'proxy/http/ is HTTP plumbing (server, head, body, identity): it knows no request step, engine or assembly; the steps use it.',
      from: { path: '^src/proxy/http/' },
      to: { path: '^src/proxy/(pipeline/|engine\\.ts|createRouter\\.ts)' },
    },
    {
      name: 'proxy-upstream-is-the-bottom',
      severity: 'error',
      comment: 'proxy/upstream/ calls Anthropic: it imports none of the client side (http/, relay/), the state, the steps or the engine.',
      from: { path: '^src/proxy/upstream/' },
      to: { path: '^src/proxy/(http/|relay/|state/|status/|pipeline/|engine\\.ts|createRouter\\.ts)' },
    },
    {
      name: 'proxy-state-below-the-pipeline',
      severity: 'error',
      comment: 'proxy/state/ holds what the router knows: the steps read and change it, it calls none of them (nor the engine, nor the client side).',
      from: { path: '^src/proxy/state/' },
      to: { path: '^src/proxy/(pipeline/|http/|engine\\.ts|createRouter\\.ts)' },
    },
    {
      name: 'proxy-relay-below-the-pipeline',
      severity: 'error',
      comment: 'proxy/relay/ writes answers to the client: the steps call it, it calls no step and not the engine.',
      from: { path: '^src/proxy/relay/' },
      to: { path: '^src/proxy/(pipeline/|engine\\.ts|createRouter\\.ts)' },
    },
    {
      name: 'cli-not-to-vscode',
      severity: 'error',
      comment: 'The command-line program runs without VS Code.',
      from: { path: '^src/cli/' },
      to: { path: '^src/vscode/' },
    },
    {
      name: 'only-vscode-imports-vscode',
      severity: 'error',
      comment: 'Only the extension shell (src/vscode/) imports the `vscode` module.',
      from: { path: '^src/', pathNot: '^src/vscode/' },
      to: { path: ['^vscode$', '(^|/)node_modules/@types/vscode/', '(^|/)node_modules/vscode/'] },
    },
    {
      name: 'webview-runs-in-a-browser',
      severity: 'error',
      comment: "src/webview/ is the status panel's page: at run time only its own modules and pure quota/ helpers (types from anywhere).",
      from: { path: '^src/webview/' },
      to: { path: ['^src/', ...IMPURE_MODULES], pathNot: '^src/(webview|quota)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'sim-imports-no-engine-layer',
      severity: 'error',
      comment: 'sim/ is a fake upstream: it imports none of the engine layers.',
      from: { path: '^src/sim/' },
      to: { path: '^src/', pathNot: '^src/sim/' },
    },
    {
      name: 'only-shells-and-whatif-import-sim',
      severity: 'error',
      comment: 'Only cli/ and vscode/ (the demo) and whatif/ (the world model) import sim/.',
      from: { path: '^src/', pathNot: '^src/(sim|cli|vscode|whatif)/' },
      to: { path: '^src/sim/' },
    },
    {
      name: 'whatif-imports-only-sim-world-model',
      severity: 'error',
      comment: 'The what-if simulator uses only the pure world model of sim/ (windows, prompt cache).',
      from: { path: '^src/whatif/' },
      to: { path: '^src/sim/', pathNot: SIM_WORLD_MODEL },
    },
    {
      name: 'whatif-imports-only-routing-quota-and-world-model',
      severity: 'error',
      comment: 'whatif/ replays decisions through the pure planner: routing/, quota/ and the sim world model only.',
      from: { path: '^src/whatif/' },
      to: { path: '^src/', pathNot: ['^src/(whatif|routing|quota|sim)/'] },
    },
    {
      name: 'whatif-is-pure',
      comment: 'whatif/ replays in virtual time: no I/O, timers or machine state (the CLI reads the logs and keeps the wall clock).',
      severity: 'error',
      from: { path: '^src/whatif/' },
      to: { path: IMPURE_MODULES },
    },
    {
      name: 'sim-world-model-is-pure',
      severity: 'error',
      comment: 'The world model the what-if simulator uses stays pure: no I/O, no other sim/ module.',
      from: { path: SIM_WORLD_MODEL },
      to: { path: [...IMPURE_MODULES, '^src/sim/'], pathNot: SIM_WORLD_MODEL },
    },
    {
      name: 'redis-client-loaded-on-demand',
      severity: 'error',
      comment:
        'The Redis client loads only when a shared store is opened: only src/store/connection.ts imports ioredis, and the rest of src/ imports that module for its types or through import(). ' +
        'A router without a store then pays nothing for it at start-up; and should a dependency of it slow a built-in again, as its String subclass did (replaced in the bundles: esbuild.mjs), only store users are exposed (docs/performance.md, "Loading the Redis client").',
      from: { path: '^src/', pathNot: '^src/store/connection\\.ts$' },
      to: { path: ['^src/store/connection\\.ts$', '(^|/)node_modules/ioredis/', '^ioredis$'], dependencyTypesNot: ['type-only', 'dynamic-import'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      from: {},
      to: { couldNotResolve: true, pathNot: '^vscode$' },
    },
    {
      name: 'no-non-package-json',
      severity: 'error',
      comment: 'A package the code imports must be declared in package.json.',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'product-not-to-dev-dependency',
      severity: 'error',
      comment: 'The bundles ship only dependencies; src/ may use devDependencies for types only (and `vscode`, which the host provides).',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'], pathNot: '(^|/)node_modules/@types/vscode/' },
    },
  ],
  options: {
    exclude: { path: '^(out|dist)/' },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};

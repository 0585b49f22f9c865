// Bundles the standalone CLI, the fake upstream, the VS Code extension and its panel's page into dist/.
// One bundle per entry point keeps start-up to a single file read.
import * as path from 'node:path';
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
// ioredis's `class VerbatimString extends String` slows every string method of the process once it
// loads; its decoder only compares against the class, so a bundle gets one that subclasses nothing
// (src/store/verbatimString.ts says why it is safe). Fails the build when ioredis no longer has it.
const verbatimString = {
  name: 'ioredis-verbatim-string',
  setup(build) {
    let replaced = false;
    build.onResolve({ filter: /^\.\/verbatim-string$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]ioredis[\\/]built[\\/]resp[\\/]/.test(args.importer)) return undefined;
      replaced = true;
      return { path: path.resolve('src/store/verbatimString.ts') };
    });
    build.onEnd((result) => {
      const bundlesRedis = Object.keys(result.metafile?.inputs ?? {}).some((f) => f.includes('node_modules/ioredis/'));
      if (bundlesRedis && !replaced) throw new Error('esbuild.mjs: ioredis no longer imports ./verbatim-string from built/resp/: check that it declares no subclass of String, then update the plugin');
    });
  },
};
const base = { outdir: 'dist', bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: true, logLevel: 'warning', metafile: true, plugins: [verbatimString] };
// The CLI without whitespace and comments but with its names, so stack traces in its logs still
// say which function failed; comments beyond Latin-1 make V8 hold the source as a two-byte string
// (docs/performance.md). String literals are ASCII either way: esbuild escapes them.
const cli = {
  ...base,
  entryPoints: { cli: 'src/cli/main.ts', sim: 'src/sim/main.ts' },
  banner: { js: '#!/usr/bin/env node' },
  minifyWhitespace: true,
  minifySyntax: true,
};
// The extension: `vscode` is provided by the extension host; minified to keep the VSIX small. Its
// what-if simulation runs in a child process of its own (simulate.js), off the extension host's thread.
const extension = { ...base, entryPoints: { extension: 'src/vscode/extension.ts', simulate: 'src/cli/simulateChild.ts' }, external: ['vscode'], minify: true };
// The status panel's page: one script for the webview (a browser page under a strict CSP), morphdom included.
const panel = { ...base, entryPoints: { panel: 'src/webview/main.ts' }, platform: 'browser', format: 'iife', target: 'es2022', minify: true };

if (watch) {
  for (const options of [cli, extension, panel]) await (await esbuild.context(options)).watch();
} else {
  await Promise.all([esbuild.build(cli), esbuild.build(extension), esbuild.build(panel)]);
}

// Bundles the standalone CLI, the fake upstream and the VS Code extension into dist/.
// One bundle per entry point keeps start-up to a single file read.
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
const base = { outdir: 'dist', bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: true, logLevel: 'warning' };
const cli = { ...base, entryPoints: { cli: 'src/cli/main.ts', sim: 'src/sim/main.ts' }, banner: { js: '#!/usr/bin/env node' } };
// The extension: `vscode` is provided by the extension host; minified to keep the VSIX small.
const extension = { ...base, entryPoints: { extension: 'src/vscode/extension.ts' }, external: ['vscode'], minify: true };

if (watch) {
  for (const options of [cli, extension]) await (await esbuild.context(options)).watch();
} else {
  await Promise.all([esbuild.build(cli), esbuild.build(extension)]);
}

// Bundles the standalone CLI, the fake upstream and the VS Code extension into dist/.
// One bundle per entry point keeps start-up to a single file read.
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
// Licence comments go to dist/*.LEGAL.txt, linked from each bundle: one non-ASCII character in
// a bundle makes V8 keep its whole source as a two-byte string, twice the heap.
const base = { outdir: 'dist', bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: true, legalComments: 'linked', logLevel: 'warning' };
// The CLI without whitespace and comments (the source V8 keeps in the heap shrinks by two
// thirds) but with its names, so stack traces in its logs still say which function failed.
const cli = {
  ...base,
  entryPoints: { cli: 'src/cli/main.ts', sim: 'src/sim/main.ts' },
  banner: { js: '#!/usr/bin/env node' },
  minifyWhitespace: true,
  minifySyntax: true,
};
// The extension: `vscode` is provided by the extension host; minified to keep the VSIX small.
const extension = { ...base, entryPoints: { extension: 'src/vscode/extension.ts' }, external: ['vscode'], minify: true };

if (watch) {
  for (const options of [cli, extension]) await (await esbuild.context(options)).watch();
} else {
  await Promise.all([esbuild.build(cli), esbuild.build(extension)]);
}

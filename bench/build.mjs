// Bundles the benchmark programs (bench/*.ts) into out/bench/ — one file per process, like
// esbuild.mjs does for the product. The proxy under test is always the product bundle dist/cli.js.
import * as esbuild from 'esbuild';

await esbuild.build({
  entryPoints: {
    run: 'bench/run.ts',
    passthrough: 'bench/passthrough.ts',
    loadgen: 'bench/loadgen.ts',
    routing: 'bench/routing.ts',
    hotpath: 'bench/hotpath.ts',
    'cpuprofile-summary': 'bench/cpuprofile-summary.ts',
    whatif: 'bench/whatif.ts',
    instructions: 'bench/instructions.ts',
    'forecast-seeds': 'bench/forecast-seeds.ts',
    pool: 'bench/pool.ts',
    bodyMemory: 'bench/bodyMemory.ts',
  },
  outdir: 'out/bench',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  logLevel: 'warning',
});

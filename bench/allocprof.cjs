// Preload for investigations: a sampling allocation profile of the whole process that keeps
// objects already collected by the GC (node's --heap-prof reports only those still live), so
// it shows where the allocation rate comes from. Written at exit to
// $ALLOC_PROF_DIR/alloc-<pid>.heapprofile; read it with out/bench/cpuprofile-summary.js.
//   BENCH_PROXY_FLAGS="--require ./bench/allocprof.cjs" ALLOC_PROF_DIR=/tmp/alloc npm run bench
'use strict';
const inspector = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');

const session = new inspector.Session();
session.connect();
session.post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
process.on('exit', () => {
  // The in-thread session answers synchronously, so this completes inside the exit handler.
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (!err) fs.writeFileSync(path.join(process.env.ALLOC_PROF_DIR || '.', `alloc-${process.pid}.heapprofile`), JSON.stringify(result.profile));
  });
});

/**
 * What a built snapshot costs in memory and start-up time, this checkout
 * against another (`--compare <dir>`: a checkout of the code to compare
 * with, its node_modules installed or linked), taking turns, on the same
 * snapshot folder:
 *
 *   npx tsx bench/memory.ts [distDir] [--workers N] [--compare DIR] [--rounds N] [--evict]
 *
 * `--evict` drops the snapshot's packed body files and search postings from the page cache
 * before each start (GNU dd's `iflag=nocache`), so that the page-cache share
 * is what that start and its collection pulled in, not what earlier runs
 * (or the build) left there.
 *
 * Per server: spawn to /ready (the slowest worker's own start to ready
 * with --workers), and per process RSS split as /proc/<pid>/smaps_rollup
 * counts it (bench/procs.ts smapsOf): its own memory (RSS minus the file
 * pages it maps) and the file pages it maps. The total counts shared pages
 * once: every process's own memory, plus the largest file-mapped share (the
 * same node binary and libraries in each), plus what the page cache holds
 * (fincore) of the packed body files and search postings, once for every process.
 */
import path from 'node:path'
import { parseArgs } from 'node:util'
import { installExitHooks, killAll, stopChild } from './procs.ts'
import { describeMemory, evictPackedFiles, memoryFigures, startJobsnap } from './servers.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    workers: { type: 'string', default: '1' },
    compare: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    evict: { type: 'boolean', default: false },
  },
})
const distDir = path.resolve(positionals[0] ?? '.bench/dist-100k')
const workers = Number(values.workers)
const rounds = Number(values.rounds)
const here = path.resolve(import.meta.dirname, '..')
const checkouts = [{ name: 'this checkout', dir: here }]
if (values.compare) checkouts.push({ name: `compare (${values.compare})`, dir: path.resolve(values.compare) })

installExitHooks()
console.log(
  `${distDir}: ${workers} worker(s)${values.evict ? ', body files and postings evicted from the page cache before each start' : ''}`,
)
for (let round = 1; round <= rounds; round++) {
  for (const checkout of checkouts) {
    if (values.evict) evictPackedFiles(distDir)
    const server = await startJobsnap(checkout.dir, distDir, 900_000, workers)
    // Let the post-load collection the holder asks for run.
    await new Promise((resolve) => setTimeout(resolve, 3000))
    console.log(
      `round ${round}, ${checkout.name}: ready ${(server.readyMs / 1000).toFixed(2)} s after spawn; ${describeMemory(memoryFigures(server, distDir))}`,
    )
    await stopChild(server.child)
  }
}
killAll()
process.exit(0)

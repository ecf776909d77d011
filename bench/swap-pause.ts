/**
 * The hot-swap pause as a load generator sees it: serves a dist folder that
 * holds at least two snapshots (default `.bench/dist-100k`; an incremental
 * build after a small change makes the second), loads it with autocannon
 * (10 keep-alive connections, random single jobs of both snapshots), then
 * re-points `current` between the two newest snapshots three times, the way
 * `jobsnap build` publishes. Prints, per swap, the longest request that
 * overlapped it, beside the latency of quiet seconds before the first (after
 * a warm-up), and this process's own longest event-loop stall while that
 * request was out (a client that pauses measures its requests long).
 * `current` is put back where it was at the end.
 *
 *   npx tsx bench/swap-pause.ts [distDir] [--workers N]
 */
import { readFileSync } from 'node:fs'
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { listSnapshots, pointCurrentAt } from '../build/index.ts'
import { publishedSnapshotId } from '../core/index.ts'
import { LatencyRecorder } from './load.ts'
import { LOOPBACK } from '../support/processes.ts'
import { installExitHooks } from './procs.ts'
import { startJobsnap } from './servers.ts'
import { loadVocabulary } from './workload.ts'

const CONNECTIONS = 10
const SWAPS = 3
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const { values: flags, positionals } = parseArgs({
  options: { workers: { type: 'string', default: '1' } },
  allowPositionals: true,
})
const workers = Number(flags.workers)
if (!Number.isInteger(workers) || workers < 1) {
  console.error(`--workers must be a whole number of at least 1; got ${flags.workers}`)
  process.exit(2)
}
const distDir = path.resolve(positionals[0] ?? '.bench/dist-100k')
const snapshots = (await listSnapshots(distDir)).slice(-2)
const original = await publishedSnapshotId(distDir)
if (snapshots.length < 2 || original === undefined) {
  console.error(
    `${distDir} needs a published snapshot and one more to swap to: build again (npm run build -- --data DIR --out ${distDir}).`,
  )
  process.exit(2)
}

// Slugs in both snapshots: a job only one of them holds would answer 404 from the other.
const [before, after] = snapshots.map((id) => loadVocabulary(path.join(distDir, 'snapshots', id)).slugs)
const inBoth = new Set(after)
const slugs = before!.filter((slug) => inBoth.has(slug))

installExitHooks()
const server = await startJobsnap(process.cwd(), distDir, 60_000, workers)
console.log(
  `serving ${await realpath(path.join(distDir, 'current'))} (${slugs.length} jobs in both snapshots); ready in ${(server.readyMs / 1000).toFixed(2)} s`,
)

/** Each answered request: when it started and ended (ms, this process's clock). */
const answers: { startedAt: number; endedAt: number }[] = []
/**
 * This process's own event-loop stalls over 10 ms (its collections, the load generator's bursts): a request
 * whose answer arrived during one is measured long by the client, whatever the server did. Printed beside
 * each swap's figure, so that a client-side pause is seen as one.
 */
const ownStalls: { from: number; to: number }[] = []
let lastTick = performance.now()
const stallWatch = setInterval(() => {
  const now = performance.now()
  if (now - lastTick > 10) ownStalls.push({ from: lastTick, to: now })
  lastTick = now
}, 1)
let failures = 0
let finish!: (result: autocannon.Result) => void
const finished = new Promise<autocannon.Result>((resolve) => (finish = resolve))
const instance = autocannon(
  {
    url: `http://${LOOPBACK}:${server.port}`,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: 120, // a bound; stopped after the last swap
    timeout: 30,
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => ({
          ...request,
          path: `/api/v2/jobs/${slugs[Math.floor(Math.random() * slugs.length)]}`,
        }),
      },
    ],
  },
  (_error, result) => finish(result),
)
instance.on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => {
  const endedAt = performance.now()
  answers.push({ startedAt: endedAt - responseTime, endedAt })
  if (status !== 200) failures++
})
instance.on('reqError', () => failures++)

const WARM_UP_MS = 3000
let quietFrom = Infinity
const swaps: { at: number; wall: string; to: string }[] = []
try {
  await sleep(WARM_UP_MS) // JIT, file cache: not part of the baseline
  quietFrom = performance.now()
  await sleep(5000) // the quiet baseline
  let target = snapshots.find((id) => id !== original) ?? snapshots[0]!
  for (let swap = 0; swap < SWAPS; swap++) {
    swaps.push({ at: performance.now(), wall: new Date().toISOString(), to: target })
    await pointCurrentAt(distDir, target)
    await sleep(5000) // the server notices, loads and switches
    target = target === snapshots[0] ? snapshots[1]! : snapshots[0]!
  }
} finally {
  instance.stop()
  clearInterval(stallWatch)
  await pointCurrentAt(distDir, original)
}
await finished

const quiet = new LatencyRecorder()
for (const answer of answers)
  if (answer.startedAt >= quietFrom && answer.endedAt < swaps[0]!.at) quiet.add(answer.endedAt - answer.startedAt)
const q = quiet.summary()
console.log(`${answers.length} requests, ${failures} failed (connection errors or not 200), ${CONNECTIONS} connections`)
console.log(
  `quiet (the 5 s before the first swap, after ${WARM_UP_MS / 1000} s of warm-up): p50 ${q.p50.toFixed(1)} ms, p99 ${q.p99.toFixed(1)} ms, max ${q.max.toFixed(1)} ms`,
)
for (const [i, swap] of swaps.entries()) {
  const window = answers.filter((a) => a.endedAt > swap.at && a.startedAt < swap.at + 5000)
  const during = new LatencyRecorder()
  for (const answer of window) during.add(answer.endedAt - answer.startedAt)
  const d = during.summary()
  // When the longest began, from the publish: which part of the swap it sat through (a load, a collection after it).
  const longest = window.reduce((a, b) => (b.endedAt - b.startedAt > a.endedAt - a.startedAt ? b : a), window[0]!)
  // This process's longest own stall while the longest request was out: the part of it the client added.
  const overlapping = ownStalls.filter((stall) => stall.to > longest.startedAt && stall.from < longest.endedAt)
  const ownMs = Math.max(0, ...overlapping.map((stall) => stall.to - stall.from))
  console.log(
    `swap ${i + 1} (to ${swap.to}, published ${swap.wall.slice(11, 23)}): longest request in the 5 s after publishing ${d.max.toFixed(1)} ms (began ${(longest.startedAt - swap.at).toFixed(0)} ms after; this client's own longest stall meanwhile ${ownMs.toFixed(1)} ms); p99 ${d.p99.toFixed(1)} ms over ${window.length} requests`,
  )
}
// A cluster logs each worker's swap (JSON lines): how long it loaded, and waited for its turn to.
// A cluster logs to a file (bench/servers.ts).
const logLines = server.logFile === undefined ? [] : readFileSync(server.logFile, 'utf8').split('\n')
for (const line of logLines) {
  if (!line.includes('"snapshot loaded"')) continue
  const swap = JSON.parse(line) as { time: string; worker?: number; load_ms: number; turn_wait_ms?: number }
  console.log(
    `  worker ${swap.worker}: at ${swap.time.slice(11, 23)}, loaded in ${swap.load_ms} ms${swap.turn_wait_ms === undefined ? '' : ` after waiting ${swap.turn_wait_ms} ms for its turn`}`,
  )
}
process.exit(failures === 0 ? 0 : 1)

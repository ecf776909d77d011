/**
 * The worst query time at full size: serves a built snapshot (default
 * `.bench/dist-100k`, the 100,000-job benchmark dataset) on 127.0.0.1 and
 * runs the security suite's adversarial queries against it (the costliest
 * q values for the snapshot's own vocabulary, every filter at its broadest
 * and narrowest, URLs repeating one value thousands of times, both sorts).
 * Prints, per query, the wall time of a computed (uncached) answer over
 * HTTP, the faster of two runs, and the in-process query time alone.
 *
 *   npx tsx bench/worst-query.ts [distDir]
 */
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { loadConfig, parseV2ListQuery } from '../core/index.ts'
import { queryContext, runV2Query, startServer } from '../runtime/index.ts'
import { adversarialQueries } from '../support/adversarial-queries.ts'
import { rawGet, targetOf } from '../support/raw-http.ts'

const distDir = process.argv[2] ?? '.bench/dist-100k'
const snapshotDir = await realpath(path.join(distDir, 'current'))
const queries = await adversarialQueries(snapshotDir)
const server = await startServer({
  config: loadConfig(
    {},
    { PORT: 0, HOST: '127.0.0.1', JOBSNAP_DIST: distDir, JOBSNAP_LOG: 'silent', JOBSNAP_REST_LIMIT: 1_000_000_000 },
  ),
  watch: false,
})
const target = targetOf(server.url)
const snapshot = server.snapshots.current
const now = Date.now()

try {
  for (const warm of ['/api/v2/jobs?limit=100', '/api/v2/jobs?q=engineer&sort=salary&limit=100'])
    await rawGet(target, warm)
  const rows: { name: string; httpMs: number; queryMs: number; total: number; status: number }[] = []
  for (const { name, query } of queries) {
    let httpMs = Infinity
    let status = 0
    for (const limit of ['100', '99']) {
      const res = await rawGet(target, `/api/v2/jobs?${query.replace(/(^|&)limit=100(?=&|$)/, `$1limit=${limit}`)}`)
      status = res.status
      httpMs = Math.min(httpMs, res.elapsedMs)
    }
    const parsed = parseV2ListQuery(new URLSearchParams(query))
    let queryMs = Infinity
    let total = -1
    if (parsed.ok) {
      for (let i = 0; i < 2; i++) {
        const started = performance.now()
        total = runV2Query(queryContext(snapshot, now), parsed.value).total
        queryMs = Math.min(queryMs, performance.now() - started)
      }
    }
    rows.push({ name, httpMs, queryMs, total, status })
  }
  rows.sort((a, b) => b.httpMs - a.httpMs)
  const refused = rows.filter((r) => r.status !== 200)
  console.log(
    `${rows.length} adversarial queries on ${snapshot.jobs.size.toLocaleString('en')} live jobs (${snapshot.id})`,
  )
  console.log('http ms  query ms  matches  query')
  for (const r of rows.slice(0, 12))
    console.log(
      `${r.httpMs.toFixed(1).padStart(7)}  ${r.queryMs.toFixed(1).padStart(8)}  ${String(r.total).padStart(7)}  ${r.name}`,
    )
  const median = rows[Math.floor(rows.length / 2)]!
  const worstQuery = [...rows].sort((a, b) => b.queryMs - a.queryMs)[0]!
  console.log(
    `worst over HTTP: ${rows[0]!.httpMs.toFixed(1)} ms (${rows[0]!.name}); median ${median.httpMs.toFixed(1)} ms`,
  )
  console.log(`worst query computation alone: ${worstQuery.queryMs.toFixed(1)} ms (${worstQuery.name})`)
  if (refused.length) console.log(`not 200: ${refused.map((r) => `${r.status} ${r.name}`).join('; ')}`)
} finally {
  await server.close()
}

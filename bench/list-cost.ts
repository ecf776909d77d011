/**
 * What an uncached v2 list page costs inside the process, without HTTP:
 * the same random filter mix the bench sends (3,000 queries), each run and
 * its page stitched from the packed bodies, on one snapshot loaded by this
 * checkout (bodies held in memory as configured, and read by position), and
 * by another checkout with `--compare DIR` (its node_modules installed or
 * linked). Rounds take turns; the fastest round of each is printed, the
 * figure least disturbed by other processes on a shared machine. The pages'
 * total bytes are printed too: equal bytes, equal answers.
 *
 *   npx tsx bench/list-cost.ts [distDir] [--compare DIR] [--rounds N]
 */
import { realpathSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import type { parseV2ListQuery } from '../core/index.ts'
import type { LoadedSnapshot } from '../runtime/index.ts'
import { jobsnapListPath, loadVocabulary, prng, randomListQuery } from './workload.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { compare: { type: 'string' }, rounds: { type: 'string', default: '12' } },
})
const dir = realpathSync(path.join(positionals[0] ?? '.bench/dist-100k', 'current'))
const here = path.resolve(import.meta.dirname, '..')
const vocabulary = loadVocabulary(dir)
const random = prng(11)
const paths = Array.from({ length: 3000 }, () => jobsnapListPath(randomListQuery(random, vocabulary)))

type V2ListQuery = Extract<ReturnType<typeof parseV2ListQuery>, { ok: true }>['value']

interface Variant {
  name: string
  snapshot: LoadedSnapshot
  queries: V2ListQuery[]
  run: (snapshot: LoadedSnapshot, query: V2ListQuery) => number[]
  best: number
  bytes: number
}

async function variant(name: string, root: string, bodiesInMemoryBytes?: number): Promise<Variant> {
  const core = (await import(path.join(root, 'core/index.ts'))) as typeof import('../core/index.ts')
  const runtime = (await import(path.join(root, 'runtime/index.ts'))) as typeof import('../runtime/index.ts')
  const snapshot = await runtime.loadSnapshot(dir, runtime.createFileCache(0), bodiesInMemoryBytes)
  const queries = paths.flatMap((p) => {
    const parsed = core.parseV2ListQuery(new URL(p, 'http://localhost').searchParams)
    return parsed.ok ? [parsed.value] : []
  })
  const now = Date.now()
  return {
    name,
    snapshot,
    queries,
    run: (s, q) => runtime.runV2Query(runtime.queryContext(s, now), q).positions,
    best: Infinity,
    bytes: 0,
  }
}

const variants = [
  await variant('this checkout', here),
  await variant('this checkout, bodies read by position (JOBSNAP_BODIES_MEMORY_MB=0)', here, 0),
]
// An older checkout's loadSnapshot takes no third argument: it holds its bodies as it always did.
if (values.compare) variants.push(await variant(`compare (${values.compare})`, path.resolve(values.compare)))
const [head, tail] = [Buffer.from('{"data":['), Buffer.from(']}')]
for (let round = 0; round < Number(values.rounds); round++) {
  for (const v of variants) {
    let bytes = 0
    const started = performance.now()
    for (const query of v.queries) bytes += v.snapshot.v2Bodies.join(v.run(v.snapshot, query), head, tail).length
    v.best = Math.min(v.best, ((performance.now() - started) * 1000) / v.queries.length)
    v.bytes = bytes
  }
}
for (const v of variants)
  console.log(
    `${v.name}: fastest of ${values.rounds} rounds ${v.best.toFixed(0)} us per query and page (${v.queries.length} queries, ${v.bytes} bytes of pages)`,
  )

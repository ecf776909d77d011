/**
 * Which bodies the uncached list mix reads: of every body on the pages of
 * the bench's 3,000 random queries, the share among the newest jobs (the
 * lowest positions) and among the best paid (the top of the salary order),
 * for a few shares of the jobs. It is what JOBSNAP_BODIES_HOT_MB's choice
 * rests on: first pages show the newest or the best-paid matches.
 *
 *   npx tsx bench/body-reads.ts [distDir]
 */
import { realpathSync } from 'node:fs'
import path from 'node:path'
import { parseV2ListQuery } from '../core/index.ts'
import { createFileCache, loadSnapshot, queryContext, runV2Query } from '../runtime/index.ts'
import { jobsnapListPath, loadVocabulary, prng, randomListQuery } from './workload.ts'

const dir = realpathSync(path.join(process.argv[2] ?? '.bench/dist-100k', 'current'))
const vocabulary = loadVocabulary(dir)
const random = prng(11)
const snapshot = await loadSnapshot(dir, createFileCache(0))
const { size, salaryRank } = snapshot.jobs
const now = Date.now()
const read: number[] = []
for (let i = 0; i < 3000; i++) {
  const parsed = parseV2ListQuery(
    new URL(jobsnapListPath(randomListQuery(random, vocabulary)), 'http://x').searchParams,
  )
  if (parsed.ok) read.push(...runV2Query(queryContext(snapshot, now), parsed.value).positions)
}
snapshot.close()
const percent = (holds: (p: number) => boolean) => `${((read.filter(holds).length / read.length) * 100).toFixed(1)}%`
console.log(`${dir}: ${read.length} bodies on the pages of 3,000 random list queries`)
for (const share of [0.01, 0.025, 0.05, 0.1]) {
  const end = share * size
  console.log(
    `the ${share * 100}% newest: ${percent((p) => p < end)}; the ${share * 100}% best paid: ${percent((p) => salaryRank[p]! < end)}; either: ${percent((p) => p < end || salaryRank[p]! < end)}`,
  )
}

/**
 * What facet counts add to an uncached v2 list request: random filter-mix
 * queries sent one at a time, each twice (once plain, once with every facet,
 * in alternating order), so each pair differs only by `facets`. Only pairs
 * where both were computed (X-Cache: MISS) count. Reports the added time per
 * pair at the median and p95.
 */
import { rawGet, targetOf } from '../support/raw-http.ts'
import { jobsnapListPath, prng, randomListQuery, type Vocabulary } from './workload.ts'

const ALL_FACETS = 'category,level,schedule,work_arrangement,skills,country,company'

export interface FacetCost {
  pairs: number
  plainMedianMs: number
  addedMedianMs: number
  addedP95Ms: number
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!

export async function measureFacetCost(options: {
  port: number
  vocabulary: Vocabulary
  seed: number
  pairs?: number
}): Promise<FacetCost> {
  const target = targetOf(`http://127.0.0.1:${options.port}`)
  const random = prng(options.seed)
  const pairs = options.pairs ?? 300
  const plain: number[] = []
  const added: number[] = []
  for (let i = 0; i < pairs; i++) {
    const path = jobsnapListPath(randomListQuery(random, options.vocabulary))
    const withFacets = `${path}&facets=${ALL_FACETS}`
    const order = i % 2 === 0 ? [path, withFacets] : [withFacets, path]
    const [first, second] = [await rawGet(target, order[0]!), await rawGet(target, order[1]!)]
    for (const res of [first, second]) if (res.status !== 200) throw new Error(`facet cost: ${res.status} for ${path}`)
    if (first.headers['x-cache'] !== 'MISS' || second.headers['x-cache'] !== 'MISS') continue
    const [plainMs, facetMs] = i % 2 === 0 ? [first.elapsedMs, second.elapsedMs] : [second.elapsedMs, first.elapsedMs]
    plain.push(plainMs)
    added.push(facetMs - plainMs)
  }
  plain.sort((a, b) => a - b)
  added.sort((a, b) => a - b)
  return {
    pairs: added.length,
    plainMedianMs: quantile(plain, 0.5),
    addedMedianMs: quantile(added, 0.5),
    addedP95Ms: quantile(added, 0.95),
  }
}

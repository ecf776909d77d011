/**
 * Search precision (docs/api.md: Full text): the evaluation set over the
 * embedded sample data (support/search-eval.ts) against a real server. A
 * correctly spelled word finds what its spelling finds and no typo
 * neighbours ("stark" never also finds "start"); a misspelt one still finds
 * what was meant. `npx tsx bench/search-eval.ts` prints the same figures
 * query by query.
 */
import { describe, expect, it } from 'vitest'
import { evaluateSampleData, precisionRecall } from '../../support/search-eval.ts'

describe('q over the sample data', () => {
  it('is precise when spelled right (>= 95%) and forgiving when misspelt (recall >= 90%)', async () => {
    const results = await evaluateSampleData()
    expect(results.length).toBeGreaterThanOrEqual(40)
    const misspelt = results.filter((r) => r.query.kind === 'misspelt')
    const spelled = results.filter((r) => r.query.kind !== 'misspelt')
    expect(misspelt.length).toBeGreaterThanOrEqual(10)
    expect(
      results.filter((r) => r.query.kind === 'near words').length,
      'words with typo neighbours are in the set',
    ).toBeGreaterThanOrEqual(5)
    for (const r of results) expect(r.expected, `${r.query.q}: the oracle finds something`).toBeGreaterThan(0)
    const right = precisionRecall(spelled)
    const typo = precisionRecall(misspelt)
    console.log(
      `search eval: spelled right ${spelled.length} queries, precision ${right.precision.toFixed(3)} recall ${right.recall.toFixed(3)}; misspelt ${misspelt.length}, recall ${typo.recall.toFixed(3)} precision ${typo.precision.toFixed(3)}`,
    )
    expect(right.precision).toBeGreaterThanOrEqual(0.95)
    expect(right.recall).toBe(1)
    expect(typo.recall).toBeGreaterThanOrEqual(0.9)
  })
})

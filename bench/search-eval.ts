/**
 * Search precision and recall over the embedded sample data: the evaluation
 * set of support/search-eval.ts (company names, skills, title words, cities,
 * two-word queries, misspellings) sent as `q` to a real server, scored
 * against an oracle that reads the served jobs' words.
 *
 *   npx tsx bench/search-eval.ts
 */
import { evaluateSampleData, precisionRecall } from '../support/search-eval.ts'

const results = await evaluateSampleData()
const pct = (x: number) => `${(x * 100).toFixed(1)}%`
console.log(`${results.length} queries over the sample data`)
console.log('expected  found  relevant  kind        q (meaning)')
for (const r of results)
  console.log(
    `${String(r.expected).padStart(8)}  ${String(r.found).padStart(5)}  ${String(r.relevantFound).padStart(8)}  ${r.query.kind.padEnd(10)}  ${r.query.q}${r.query.q === r.query.intended ? '' : ` (${r.query.intended})`}`,
  )
const spelled = precisionRecall(results.filter((r) => r.query.kind !== 'misspelt'))
const misspelt = precisionRecall(results.filter((r) => r.query.kind === 'misspelt'))
console.log(
  `correctly spelled (${results.filter((r) => r.query.kind !== 'misspelt').length} queries): precision ${pct(spelled.precision)} (target ≥ 95%: ${spelled.precision >= 0.95 ? 'met' : 'MISSED'}), recall ${pct(spelled.recall)}`,
)
console.log(
  `misspelt (${results.filter((r) => r.query.kind === 'misspelt').length} queries): recall ${pct(misspelt.recall)} (target ≥ 90%: ${misspelt.recall >= 0.9 ? 'met' : 'MISSED'}), precision ${pct(misspelt.precision)}`,
)

/**
 * An evaluation set for `q`, made from a dataset's own served jobs: company
 * names, skills, title words, cities, two-word queries, and misspellings of
 * long words (one letter dropped, doubled, swapped or replaced, checked to
 * match no word as typed). The expected matches come from an oracle written
 * here, not from the search index: a job matches a term when one of its
 * words (split on spaces and punctuation, lower-cased) starts with it, or
 * equals it for terms under 3 letters; a misspelt query is expected to find
 * what the intended spelling finds.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { buildSnapshot, createProgress } from '../build/index.ts'
import { loadConfig } from '../core/index.ts'
import { startServer } from '../runtime/index.ts'
import { LOOPBACK, REPO_ROOT } from './processes.ts'

/** The fields of a v2 job that `q` searches. */
interface SearchableJob {
  slug: string
  title: string
  role?: string
  description?: string
  company?: { name: string }
  skills?: { name: string }[]
  stack?: { name: string }[]
  tools?: { name: string }[]
  office_locations?: Place[]
  remote_allowed?: Place[]
}
interface Place {
  city?: string
  state?: string
  country?: string
  continent?: string
  region?: string
}

interface EvalQuery {
  kind: 'company' | 'skill' | 'title' | 'city' | 'two words' | 'near words' | 'misspelt'
  q: string
  /** The spelling the query means (the query itself unless misspelt). */
  intended: string
}

const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[\n\r\p{Z}\p{P}]+/u)
    .filter((w) => w !== '')

function jobWords(job: SearchableJob): string[] {
  const places = [...(job.office_locations ?? []), ...(job.remote_allowed ?? [])].flatMap((l) => [
    l.city,
    l.state,
    l.country,
    l.continent,
    l.region,
  ])
  const tags = [...(job.skills ?? []), ...(job.stack ?? []), ...(job.tools ?? [])].map((t) => t.name)
  return words([job.title, job.role, job.company?.name, ...tags, ...places, job.description].filter(Boolean).join(' '))
}

/** Slugs of the jobs whose words match every term of `q`. */
function expectedMatches(jobs: SearchableJob[], q: string): Set<string> {
  const terms = [...new Set(words(q))]
  const out = new Set<string>()
  for (const job of jobs) {
    const own = jobWords(job)
    if (terms.every((t) => (t.length < 3 ? own.includes(t) : own.some((w) => w.startsWith(t))))) out.add(job.slug)
  }
  return out
}

/** A deterministic pick of `count` distinct values, spread over the list. */
function spread<T>(values: T[], count: number): T[] {
  const distinct = [...new Set(values)]
  if (distinct.length <= count) return distinct
  return Array.from({ length: count }, (_, i) => distinct[Math.floor((i * distinct.length) / count)]!)
}

/** Misspellings of `word` that begin no word of the vocabulary (so they must be forgiven as typos). */
function misspell(word: string, vocabulary: string[], variant: number): string | undefined {
  const edits = [
    (w: string) => w.slice(0, 2) + w.slice(3), // a letter dropped
    (w: string) => w.slice(0, 3) + w[3] + w.slice(3), // a letter doubled
    (w: string) => w.slice(0, 2) + w[3] + w[2] + w.slice(4), // two letters swapped
    (w: string) => `${w.slice(0, 3)}${w[3] === 'x' ? 'q' : 'x'}${w.slice(4)}`, // a letter replaced
  ]
  for (let k = 0; k < edits.length; k++) {
    const typo = edits[(variant + k) % edits.length]!(word)
    if (typo !== word && !vocabulary.some((w) => w.startsWith(typo))) return typo
  }
  return undefined
}

/** True when another word of the vocabulary is one letter added, dropped or replaced away, and is not a completion of it. */
function hasNeighbour(word: string, vocabulary: string[]): boolean {
  const oneEdit = (a: string, b: string) => {
    if (Math.abs(a.length - b.length) > 1 || a === b) return false
    let i = 0
    while (i < a.length && a[i] === b[i]) i++
    return a.slice(i + 1) === b.slice(i + 1) || a.slice(i + 1) === b.slice(i) || a.slice(i) === b.slice(i + 1)
  }
  return vocabulary.some((other) => !other.startsWith(word) && !word.startsWith(other) && oneEdit(word, other))
}

/** At least 40 queries over `jobs`, each with what it means. */
function evaluationSet(jobs: SearchableJob[]): EvalQuery[] {
  const long = (w: string) => w.length >= 4 && /^\p{L}+$/u.test(w)
  const first = (text: string | undefined) => words(text ?? '').find(long)
  const companies = spread(
    jobs.flatMap((j) => first(j.company?.name) ?? []),
    8,
  )
  const skills = spread(
    jobs.flatMap((j) => (j.skills ?? []).map((s) => s.name.toLowerCase()).filter((s) => /^\p{L}{3,}$/u.test(s))),
    8,
  )
  const titles = spread(
    jobs.flatMap((j) => words(j.title).filter(long)),
    8,
  )
  const cities = spread(
    jobs.flatMap((j) => (j.office_locations ?? []).flatMap((l) => first(l.city) ?? [])),
    8,
  )
  const queries: EvalQuery[] = [
    ...companies.map((q) => ({ kind: 'company' as const, q, intended: q })),
    ...skills.map((q) => ({ kind: 'skill' as const, q, intended: q })),
    ...titles.map((q) => ({ kind: 'title' as const, q, intended: q })),
    ...cities.map((q) => ({ kind: 'city' as const, q, intended: q })),
  ]
  for (let i = 0; i < 4; i++) {
    const q = `${titles[i % titles.length]} ${cities[(i * 3) % cities.length]}`
    queries.push({ kind: 'two words', q, intended: q })
  }
  const vocabulary = [...new Set(jobs.flatMap(jobWords))]
  // Correctly spelled words one edit from another word ("miller", "killer"): where typo tolerance costs precision.
  const named = [
    ...new Set(jobs.flatMap((j) => [...words(j.company?.name ?? ''), ...words(j.title)]).filter((w) => w.length >= 5)),
  ]
  for (const q of spread(
    named.filter((w) => hasNeighbour(w, vocabulary)),
    8,
  ))
    queries.push({ kind: 'near words', q, intended: q })
  const candidates = [...companies, ...skills, ...titles, ...cities].filter((w) => w.length >= 6)
  let variant = 0
  for (const word of spread(candidates, 16)) {
    const typo = misspell(word, vocabulary, variant++)
    if (typo) queries.push({ kind: 'misspelt', q: typo, intended: word })
  }
  return queries
}

export interface EvalResult {
  query: EvalQuery
  expected: number
  found: number
  relevantFound: number
}

/** Micro-averaged precision and recall over some results. */
export function precisionRecall(results: EvalResult[]): { precision: number; recall: number } {
  const found = results.reduce((n, r) => n + r.found, 0)
  const expected = results.reduce((n, r) => n + r.expected, 0)
  const relevant = results.reduce((n, r) => n + r.relevantFound, 0)
  return { precision: found ? relevant / found : 1, recall: expected ? relevant / expected : 1 }
}

/** Runs every query through `search` (slugs found) and scores it against the oracle. */
async function evaluate(jobs: SearchableJob[], search: (q: string) => Promise<string[]>): Promise<EvalResult[]> {
  const results: EvalResult[] = []
  for (const query of evaluationSet(jobs)) {
    const expected = expectedMatches(jobs, query.intended)
    const found = await search(query.q)
    results.push({
      query,
      expected: expected.size,
      found: found.length,
      relevantFound: found.filter((slug) => expected.has(slug)).length,
    })
  }
  return results
}

/**
 * The evaluation over the embedded sample data (`data/`), end to end: the
 * sample built into a temporary folder, a real server on loopback, every
 * query sent as `q` over HTTP and paged to the end.
 */
export async function evaluateSampleData(): Promise<EvalResult[]> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'jobsnap-search-eval-'))
  const distDir = path.join(root, 'dist')
  try {
    await buildSnapshot({
      dataDir: path.join(REPO_ROOT, 'data'),
      distDir,
      siteUrl: 'https://jobsnap.example',
      progress: createProgress(process.stderr, true),
    })
    const server = await startServer({
      config: loadConfig(
        {},
        { PORT: 0, HOST: LOOPBACK, JOBSNAP_DIST: distDir, JOBSNAP_LOG: 'silent', JOBSNAP_REST_LIMIT: 1_000_000 },
      ),
      watch: false,
    })
    try {
      const all = async (query: string) => {
        const out: (SearchableJob & { slug: string })[] = []
        for (let page = 1; ; page++) {
          const response = await fetch(`${server.url}/api/v2/jobs?${query}&limit=100&page=${page}`)
          if (response.status !== 200) throw new Error(`search eval: ${response.status} for ?${query}`)
          const body = (await response.json()) as { data: SearchableJob[]; has_more: boolean }
          out.push(...body.data)
          if (!body.has_more) return out
        }
      }
      const jobs = await all('sort=date')
      return await evaluate(jobs, async (q) => (await all(`q=${encodeURIComponent(q)}`)).map((job) => job.slug))
    } finally {
      await server.close()
    }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

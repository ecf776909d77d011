/**
 * What the load generators ask for: random slugs, random v1 pages, random v2
 * filter combinations (rendered for jobsnap and, as far as it can express
 * them, for json-server), the one cached query and the worst query. All
 * randomness is seeded, so two runs send the same request sequence.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import {
  CATEGORY_LABELS,
  countryName,
  jobFilesThroughLayers,
  LEVEL_LABELS,
  resolveCountry,
  SCHEDULE_TYPE_VALUES,
  type V2Job,
  WORK_ARRANGEMENTS,
} from '../core/index.ts'

/** mulberry32: a small seeded PRNG, [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export type Random = () => number
export const pick = <T>(random: Random, values: readonly T[]): T => values[Math.floor(random() * values.length)]!
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1))
function some<T>(random: Random, values: readonly T[], max: number): T[] {
  const n = int(random, 1, max)
  return [...new Set(Array.from({ length: n }, () => pick(random, values)))]
}

/** What the snapshot holds, to draw realistic values from. */
export interface Vocabulary {
  slugs: string[]
  v1Pages: number
  skills: string[]
  countries: string[]
  /** Categories the sampled jobs have (the MCP tools refuse a category no live job has). */
  categories: string[]
  /** Words of titles and skills, for `q`. */
  words: string[]
}

/** Slugs from the v2 file names (through the snapshot's job layers); skills, countries and words from a sample of jobs. */
export function loadVocabulary(snapshotDir: string, sampleSize = 600): Vocabulary {
  const jobFiles = jobFilesThroughLayers(snapshotDir)
  const slugs = [...jobFiles.keys()].sort()
  if (slugs.length === 0) throw new Error(`no v2 job files in ${path.join(snapshotDir, 'v2')}`)
  const v1Pages = readdirSync(path.join(snapshotDir, 'v1', '25')).filter((name) => /^\d+\.json$/.test(name)).length
  const random = prng(7)
  const skills = new Set<string>()
  const countries = new Set<string>()
  const categories = new Set<string>()
  const words = new Set<string>()
  for (let i = 0; i < Math.min(sampleSize, slugs.length); i++) {
    const job = JSON.parse(readFileSync(jobFiles.get(pick(random, slugs))!, 'utf8')) as V2Job
    for (const tag of [...(job.skills ?? []), ...(job.stack ?? []), ...(job.tools ?? [])]) {
      skills.add(tag.slug)
      for (const word of tag.name.toLowerCase().split(/[^a-z0-9]+/)) if (word.length >= 3) words.add(word)
    }
    for (const place of [...(job.office_locations ?? []), ...(job.remote_allowed ?? [])])
      if (place.country) countries.add(place.country)
    for (const word of job.title.toLowerCase().split(/[^a-z0-9]+/)) if (word.length >= 3) words.add(word)
    if (job.category) categories.add(job.category)
  }
  return {
    slugs,
    v1Pages,
    skills: [...skills].sort(),
    countries: [...countries].sort(),
    categories: [...categories].sort(),
    words: [...words].sort(),
  }
}

/** A v2 list query as plain data, rendered per server below. */
export interface ListQuery {
  category?: string[]
  level?: string[]
  schedule?: string[]
  work_arrangement?: string[]
  skills?: string[]
  country?: string[]
  salary_min?: number
  salary_max?: number
  posted_after?: number
  q?: string
  sort?: 'date' | 'salary'
  page?: number
  limit?: number
}

const CATEGORIES = Object.keys(CATEGORY_LABELS)
const LEVELS = Object.keys(LEVEL_LABELS)

/** A term for `q`: a whole word, a 3-4 letter prefix, or (5+ letters) a word with one typo. */
function qTerm(random: Random, words: readonly string[]): string {
  const word = pick(random, words)
  const roll = random()
  if (roll < 0.3 && word.length > 4) return word.slice(0, int(random, 3, 4))
  if (roll < 0.45 && word.length >= 6) {
    const at = int(random, 1, word.length - 2)
    return word.slice(0, at) + word.slice(at + 1)
  }
  return word
}

/**
 * One random filter combination. Every v2 parameter is in the mix (each
 * present with some probability, at least one filter always), including
 * `q` and `sort=salary`; with paging and limits the space is so large that
 * repeats, and so response-cache hits, are rare.
 */
export function randomListQuery(random: Random, vocabulary: Vocabulary): ListQuery {
  const query: ListQuery = {}
  for (;;) {
    if (random() < 0.3) query.category = some(random, CATEGORIES, 2)
    if (random() < 0.3) query.level = some(random, LEVELS, 2)
    if (random() < 0.3) query.schedule = some(random, SCHEDULE_TYPE_VALUES, 2)
    if (random() < 0.25) query.work_arrangement = some(random, WORK_ARRANGEMENTS, 2)
    if (random() < 0.25 && vocabulary.skills.length) query.skills = some(random, vocabulary.skills, 2)
    if (random() < 0.3 && vocabulary.countries.length) query.country = some(random, vocabulary.countries, 2)
    if (random() < 0.2) query.salary_min = int(random, 30, 150) * 1000
    if (random() < 0.1) query.salary_max = (query.salary_min ?? 20_000) + int(random, 10, 150) * 1000
    if (random() < 0.2) query.posted_after = int(random, 1, 120)
    if (random() < 0.4 && vocabulary.words.length)
      query.q = Array.from({ length: int(random, 1, 2) }, () => qTerm(random, vocabulary.words)).join(' ')
    if (Object.keys(query).length > 0) break
  }
  query.sort = random() < 0.5 ? 'salary' : 'date'
  query.page = random() < 0.7 ? 1 : int(random, 2, 5)
  query.limit = pick(random, [25, 25, 25, 10, 50, 100])
  return query
}

/** The one repeated query of the "v2 list, cached" scenario. */
export const CACHED_QUERY: ListQuery = { category: ['engineering'], schedule: ['4_day_week'], sort: 'salary' }

/**
 * The worst query known (measured against the 100k snapshot while writing
 * this): `q` at its MAX_QUERY_TERMS limit of 12 terms, each a three-letter
 * prefix of words found in (nearly) every job ("sch"edule, "you", "hir"ing,
 * "joi"n, "tea"m, "the", "wha"t, ...), so every term expands through the
 * vocabulary and walks a posting list of about every job; plus a long list
 * in every set filter (a dozen countries, each expanding to its continent,
 * regions and Worldwide; six categories; four levels; all three
 * arrangements; eight skills), `posted_after`, `sort=salary` and
 * `limit=100` (one hundred job bodies to assemble). The scenario adds a
 * random `salary_min` between 1 and 2,000 USD a year (every published salary
 * is above it, so the result barely changes) only to defeat the response
 * cache; it is run over a single connection so that latency is the query's
 * own time, not time queued behind other requests.
 */
export const WORST_QUERY: ListQuery = {
  q: 'sch you hir joi tea the wha int wee pro and day',
  country: ['US', 'DE', 'GB', 'FR', 'BR', 'IN', 'JP', 'AU', 'CA', 'ES', 'NL', 'SE'],
  category: ['engineering', 'data', 'design', 'product', 'sales', 'marketing'],
  level: ['junior', 'mid', 'senior', 'lead'],
  work_arrangement: ['onsite', 'hybrid', 'remote'],
  skills: ['python', 'sql', 'react', 'figma', 'hubspot', 'notion', 'aws', 'go'],
  posted_after: 365,
  sort: 'salary',
  limit: 100,
}

/** The worst query with its cache-defeating salary_min. */
export function worstQueryVariant(random: Random): ListQuery {
  return { ...WORST_QUERY, salary_min: int(random, 1, 2000) }
}

/** `/api/v2/jobs?...` for jobsnap: lists comma-joined, as documented. */
export function jobsnapListPath(query: ListQuery): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query) as [string, unknown][]) {
    if (value === undefined) continue
    params.set(key, Array.isArray(value) ? value.join(',') : String(value))
  }
  return `/api/v2/jobs?${params}`
}

const DAY_MS = 86_400_000

/**
 * The nearest json-server (0.17) request for a v2 query, over the same v2
 * job objects. Comparable: category, level, schedule (`schedule_type`) and
 * work_arrangement (exact match; a repeated key matches any value),
 * posted_after (`posted_at_gte` on the ISO string), sort (`_sort` on
 * `posted_at` or `salary_max`, descending) and paging (`_page`/`_limit`).
 * Not comparable, because json-server cannot express them:
 * - skills: json-server cannot look inside arrays of objects, so only the
 *   first listed skill is matched (`skills.0.slug`);
 * - country: only the first office's country name (`office_locations.0.country`),
 *   no remote_allowed, continents or regions;
 * - salary_min/max: raw amounts in the job's own currency and period, in
 *   minor units (`salary_max_gte`, `salary_min_lte`), not annualised USD;
 * - q: json-server's `q` is one case-insensitive substring searched in every
 *   field, not terms with prefixes and typos (so a multi-term q rarely
 *   matches; the cost, a scan of every field of every job, is the same);
 * - sort=salary orders by the raw `salary_max` (currency and period ignored).
 * Its job objects are the bytes of v2/jobs/<slug>.json, so responses are
 * alike in size; json-server adds no envelope (the total is a header).
 */
export function jsonServerListPath(query: ListQuery, now = Date.now()): string {
  const params = new URLSearchParams()
  const many = (key: string, values: string[] | undefined) => {
    for (const value of values ?? []) params.append(key, value)
  }
  many('category', query.category)
  many('level', query.level)
  many('schedule_type', query.schedule)
  many('work_arrangement', query.work_arrangement)
  if (query.skills?.length) params.set('skills.0.slug', query.skills[0]!)
  many(
    'office_locations.0.country',
    query.country?.map((value) => {
      const code = resolveCountry(value)
      return code ? countryName(code) : value
    }),
  )
  if (query.salary_min !== undefined) params.set('salary_max_gte', String(query.salary_min * 100))
  if (query.salary_max !== undefined) params.set('salary_min_lte', String(query.salary_max * 100))
  if (query.posted_after)
    params.set('posted_at_gte', new Date(now - query.posted_after * DAY_MS).toISOString().replace(/\.\d{3}Z$/, 'Z'))
  if (query.q) params.set('q', query.q.toLowerCase())
  params.set('_sort', query.sort === 'salary' ? 'salary_max' : 'posted_at')
  params.set('_order', 'desc')
  params.set('_page', String(query.page ?? 1))
  params.set('_limit', String(query.limit ?? 25))
  return `/jobs?${params}`
}

/**
 * The search_jobs arguments that ask what a v2 list query asks (as far as the tool's arguments go), but for
 * categories no sampled job has: the REST API filters to nothing on one, the tool refuses it (a tool error
 * naming the closest known values, which the bench would count as failed calls).
 */
export function mcpSearchArgs(query: ListQuery, vocabulary: Vocabulary): Record<string, unknown> {
  const categories = query.category?.filter((category) => vocabulary.categories.includes(category))
  const args: Record<string, unknown> = {
    query: query.q,
    schedule: query.schedule,
    category: categories?.length ? categories : undefined,
    level: query.level,
    skills: query.skills,
    country: query.country?.[0],
    work_arrangement: query.work_arrangement,
    posted_within_days: query.posted_after,
    sort: query.sort,
    page: query.page,
  }
  for (const key of Object.keys(args)) if (args[key] === undefined) delete args[key]
  return args
}

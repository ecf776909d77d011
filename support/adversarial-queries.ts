/**
 * The most expensive v2 list queries we could construct against a snapshot,
 * shared by the security suite (20,000 jobs) and bench/worst-query.ts (the
 * 100,000-job dataset). Built from the snapshot's own vocabulary: the q
 * values whose expansions touch the most postings, long typo-tolerant words,
 * 200-character inputs, unicode and repeated terms; each combined with no
 * filter, with every filter at its broadest, with every filter at its
 * narrowest, and with URLs that repeat one value thousands of times.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import {
  allCountryCodes,
  CATEGORY_LABELS,
  encodeCursor,
  FUZZY_MIN_TERM_LENGTH,
  LEVEL_LABELS,
  MAX_QUERY_TERMS,
  parseV2ListQuery,
  PREFIX_MIN_TERM_LENGTH,
  queryTermsProblem,
  SCHEDULE_TYPE_VALUES,
  SerializedTerms,
  snapshotPaths,
  v2FiltersTag,
  WORK_ARRANGEMENTS,
} from '../core/index.ts'
import { readSnapshotJobIndex, type SnapshotJobEntries } from './job-index.ts'

export interface AdversarialQuery {
  /** Short label for reports. */
  name: string
  /** The query string, percent-encoded, without the leading `?`. */
  query: string
}

const enc = encodeURIComponent

/** Q values whose expansion work is largest for this vocabulary, plus shapes that stress the tokenizer and the typo search. */
function adversarialQValues(terms: SerializedTerms): { name: string; q: string }[] {
  const postingsOfPrefix = new Map<string, number>()
  const longWords: string[] = []
  for (const [i, term] of terms.terms.entries()) {
    if (term.length >= PREFIX_MIN_TERM_LENGTH) {
      const prefix = term.slice(0, PREFIX_MIN_TERM_LENGTH)
      postingsOfPrefix.set(prefix, (postingsOfPrefix.get(prefix) ?? 0) + terms.counts[i]!)
    }
    if (term.length >= FUZZY_MIN_TERM_LENGTH) longWords.push(term)
  }
  const costlyPrefixes = [...postingsOfPrefix].sort((a, b) => b[1] - a[1]).map(([prefix]) => prefix)
  const frequentTerms = [...terms.terms.keys()]
    .sort((a, b) => terms.counts[b]! - terms.counts[a]!)
    .map((i) => terms.terms[i]!)
  const frequentLong = frequentTerms.filter((t) => t.length >= FUZZY_MIN_TERM_LENGTH)
  /** One typo (a swapped letter) so the typo search runs and still matches. */
  const typo = (word: string) => `${word.slice(0, 2)}${word[3] ?? ''}${word[2] ?? ''}${word.slice(4)}`
  // Within what q takes (200 characters, MAX_QUERY_TERMS different words): more is refused before any work.
  const withinLength = (q: string) => {
    let words = q.slice(0, 200).trim().split(' ')
    while (queryTermsProblem(words.join(' '))) words = words.slice(0, -1)
    return words.join(' ')
  }
  return [
    { name: `${MAX_QUERY_TERMS} costliest 3-letter prefixes`, q: costlyPrefixes.slice(0, MAX_QUERY_TERMS).join(' ') },
    { name: 'most frequent terms', q: withinLength(frequentTerms.slice(0, MAX_QUERY_TERMS).join(' ')) },
    {
      name: 'frequent long words with one typo each',
      q: withinLength(frequentLong.slice(0, MAX_QUERY_TERMS).map(typo).join(' ')),
    },
    {
      name: 'long words as prefixes and typos',
      q: withinLength(
        longWords
          .slice(0, 30)
          .map((w) => w.slice(0, 6))
          .join(' '),
      ),
    },
    { name: 'one costly prefix repeated', q: withinLength(`${costlyPrefixes[0] ?? 'the'} `.repeat(60)) },
    { name: 'one frequent word repeated', q: withinLength(`${frequentLong[0] ?? 'engineer'} `.repeat(30)) },
    { name: '200-char single word', q: 'a'.repeat(200) },
    { name: '200-char word of a real prefix', q: `${costlyPrefixes[0] ?? 'sch'}${'e'.repeat(197)}` },
    { name: '200 chars of 2-letter words', q: withinLength('ab '.repeat(70)) },
    { name: '200 chars of punctuation', q: withinLength('.,;:!?-_/\\'.repeat(20)) },
    { name: 'unicode words', q: 'ingénieur 工程师 инженер مهندس 🚀 ñandú Ωmega ﬁnance' },
    {
      name: 'unicode look-alikes of frequent words',
      q: withinLength(
        frequentLong
          .slice(0, 8)
          .map((w) => w.replace(/e/g, 'е').replace(/a/g, 'а'))
          .join(' '),
      ),
    },
    { name: 'combining marks', q: withinLength('e\u0301'.repeat(60)) },
    { name: 'numbers and mixed tokens', q: withinLength(Array.from({ length: 40 }, (_, i) => `${i}x${i}`).join(' ')) },
    { name: 'no match at all', q: 'zzzzqqqq xxxxyyyy' },
  ]
}

/** Every value of every filter at once, so the membership pass walks the most posting lists. */
function broadestFilters(skills: string[]): string {
  return [
    `category=${Object.keys(CATEGORY_LABELS).join(',')}`,
    `level=${Object.keys(LEVEL_LABELS).join(',')}`,
    `schedule=${SCHEDULE_TYPE_VALUES.join(',')}`,
    `work_arrangement=${WORK_ARRANGEMENTS.join(',')}`,
    `skills=${skills.map(enc).join(',')}`,
    `country=${allCountryCodes().join(',')}`,
    'salary_min=0',
    'salary_max=100000000',
    'posted_after=365',
  ].join('&')
}

/** URLs near the 16 KB limit that repeat one value thousands of times (each must cost what naming it once costs). */
function repeatedValueFilters(): { name: string; query: string }[] {
  return [
    { name: 'country=de x3,000', query: `country=${Array(3_000).fill('de').join(',')}` },
    {
      name: 'every country code x10',
      query: `country=${Array(10).fill(allCountryCodes().join(',')).join(',')}`.slice(0, 14_000).replace(/,[^,]*$/, ''),
    },
    { name: 'work_arrangement=remote x2,000', query: `work_arrangement=${Array(2_000).fill('remote').join(',')}` },
    { name: 'skills=python x2,000', query: `skills=${Array(2_000).fill('python').join(',')}` },
    { name: 'category repeated as keys x600', query: Array(600).fill('category=engineering').join('&') },
  ]
}

/**
 * `query` continued from the job halfway down its sort's order (a cursor as
 * the API would hand it out for these filters): the seek, then a walk of
 * the second half, where few matches may be left to find.
 */
function fromHalfway(index: SnapshotJobEntries, query: string): string | undefined {
  const parsed = parseV2ListQuery(new URLSearchParams(query))
  if (!parsed.ok || index.jobs.length === 0) return undefined
  const { sort } = parsed.value
  const half = Math.floor(index.jobs.length / 2)
  const job = index.jobs[sort === 'date' ? half : index.salary_order[half]!]!
  const filters = v2FiltersTag(parsed.value)
  const cursor = encodeCursor(
    sort === 'date'
      ? { sort, filters, postedAt: job.posted_at, id: job.id }
      : { sort, filters, salary: job.salary_high ?? null, postedAt: job.posted_at, id: job.id },
  )
  return `${query}&cursor=${enc(cursor)}`
}

/** Reads the snapshot's vocabulary and the most common tags, and builds every adversarial query. */
export async function adversarialQueries(snapshotDir: string): Promise<AdversarialQuery[]> {
  const terms = SerializedTerms.parse(
    JSON.parse(await readFile(path.join(snapshotDir, snapshotPaths.searchTerms), 'utf8')),
  )
  const index = await readSnapshotJobIndex(snapshotDir)
  const skills = [...index.tagCounts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 150)
    .map(([tag]) => tag)
  const topCategory = Object.keys(CATEGORY_LABELS)[0]!
  const filterSets = [
    { name: 'no filter', query: '' },
    { name: 'every filter, broadest', query: broadestFilters(skills) },
    {
      name: 'every filter, narrow',
      query: `category=${topCategory}&level=senior&schedule=4_day_week&work_arrangement=remote&skills=${enc(skills[0] ?? 'python')}&country=DE&salary_min=50000&salary_max=200000&posted_after=30`,
    },
    ...repeatedValueFilters(),
  ]
  const queries: AdversarialQuery[] = []
  for (const { name: qName, q } of adversarialQValues(terms)) {
    for (const filters of filterSets) {
      for (const sort of ['date', 'salary']) {
        // The repeated-value monsters already fill the URL; they go with the costliest q only.
        if (filters.name.includes(' x') && !qName.includes('costliest')) continue
        const parts = [`q=${enc(q)}`, filters.query, `sort=${sort}`, 'limit=100'].filter(Boolean)
        queries.push({ name: `${qName} | ${filters.name} | sort=${sort}`, query: parts.join('&') })
      }
    }
  }
  for (const filters of repeatedValueFilters())
    queries.push({ name: `${filters.name} | no q | sort=salary`, query: `${filters.query}&sort=salary&limit=100` })
  // Cursor pages: the costliest q and no q, with the three plain filter sets, from halfway down either order.
  const costliest = adversarialQValues(terms)[0]!
  for (const q of [undefined, costliest.q])
    for (const filters of filterSets.slice(0, 3))
      for (const sort of ['date', 'salary']) {
        const parts = [q === undefined ? '' : `q=${enc(q)}`, filters.query, `sort=${sort}`, 'limit=100']
        const query = fromHalfway(index, parts.filter(Boolean).join('&'))
        const qName = q === undefined ? 'no q' : costliest.name
        if (query) queries.push({ name: `${qName} | ${filters.name} | sort=${sort} | cursor halfway`, query })
      }
  return queries
}

/**
 * The in-memory query index for one snapshot: posting lists per facet value
 * and typed arrays for ranges, built once at load from index/jobs.json.
 * Positions are indexes into the date order (0 = newest).
 *
 * No object per job is kept: what the handlers read per position (the
 * ETag hash, the company, a few facet values) is in typed arrays and one
 * string, so a million jobs add a handful of objects to the heap the
 * garbage collector walks, not tens of millions.
 */
import { runSteps, type Steps } from '../../core/steps.ts'
import { addPosting } from '../../core/posting-lists.ts'
import { type CountryCode, resolveCountry } from '../../core/geo.ts'
import { inOrder, lowestSalaries, salaryRankOf, sortedExpiries } from '../../core/index-derivations.ts'
import { type JobIndexFile, type StoredDerivations, VALUE_FACETS, type ValueFacet } from '../../core/job-index-file.ts'
import { type PackedText, textAt } from '../../core/packed-text.ts'
import { ChunkedStrings } from './chunked-strings.ts'
import type { IndexedJob, SnapshotJobIndex } from '../../core/snapshot.ts'
import { BitsetCache, countBits, setWhere } from './intersect.ts'
import { PrefixBits } from './prefix-bits.ts'
import { SlugTable } from './slug-table.ts'

export type Facet = 'category' | 'level' | 'schedule' | 'work_arrangement' | 'tag' | 'place' | 'company'

/** The per-job values the range filters read, as parallel arrays in one order. */
export interface RangeColumns {
  /** Epoch ms. */
  readonly postedAt: Float64Array
  /** Epoch ms; +Infinity when the job never expires. */
  readonly expiresAt: Float64Array
  /** Annualised USD; NaN when the job publishes no salary. */
  readonly salaryLow: Float64Array
  readonly salaryHigh: Float64Array
}

/** Single-valued facets whose value per position the handlers read (MCP company and market figures). */
export type { ValueFacet }

/** One single-valued facet per position: a code each (0: no value) and the distinct values. */
class ValueColumn {
  private readonly values: string[] = []
  private readonly codeOf = new Map<string, number>()

  constructor(readonly codes: Uint32Array) {}

  /** A column as index/jobs.bin holds it: codes per position and the values by code - 1. */
  static of(codes: Uint32Array, values: readonly string[]): ValueColumn {
    const column = new ValueColumn(codes)
    column.values.push(...values)
    return column
  }

  set(position: number, value: string | undefined): void {
    if (value === undefined) return
    let code = this.codeOf.get(value)
    if (code === undefined) {
      this.values.push(value)
      code = this.values.length
      this.codeOf.set(value, code)
    }
    this.codes[position] = code
  }

  at(position: number): string | undefined {
    const code = this.codes[position]!
    return code === 0 ? undefined : this.values[code - 1]
  }
}

/** Many short strings as one string (or ASCII bytes: core/packed-text.ts) and their offsets: one heap object, however many strings. */
class PackedStrings {
  constructor(private readonly packed: PackedText) {}

  static from(strings: readonly string[]): PackedStrings {
    const offsets = new Uint32Array(strings.length + 1)
    for (let i = 0; i < strings.length; i++) offsets[i + 1] = offsets[i]! + strings[i]!.length
    return new PackedStrings({ joined: strings.join(''), offsets })
  }

  at(i: number): string {
    return textAt(this.packed, i)
  }
}

/** Posting lists by `facet:lowercased value`: a Map, or index/jobs.bin's lists (views made on demand). */
interface PostingSource {
  get(key: string): Uint32Array | undefined
  keys(): IterableIterator<string>
}

/** Strings by position: PackedStrings, ChunkedStrings. */
interface StringsByPosition {
  at(position: number): string
}

/** What JobIndexBuilder assembles; JobIndex derives the rest. */
interface JobIndexParts {
  size: number
  hashes: StringsByPosition
  /** Job ids by position: the tie-break of the date order, which cursors carry. */
  ids: PackedStrings
  values: Record<ValueFacet, ValueColumn>
  /** By date position. */
  columns: RangeColumns
  salaryOrder: Uint32Array
  salaryRank: Uint32Array
  /** salaryLowOrder's order, when the build worked it out (index/jobs.bin). */
  salaryLowOrder?: Uint32Array
  /** `facet:lowercased value` -> ascending positions. */
  postings: PostingSource
  slugs: SlugTable
  /** What the constructor derives from the columns, when already made in steps (derivedSteps). */
  derived?: Derived
}

/** The arrays an index derives from its columns and orders at construction. */
interface Derived {
  bySalary: RangeColumns
  expiries: Float64Array
  byLowestSalary?: { order: Uint32Array; lows: Float64Array }
}

/** Derived, a column or so per step. */
function* derivedSteps(
  n: number,
  columns: RangeColumns,
  salaryOrder: Uint32Array,
  salaryLowOrder: Uint32Array | undefined,
): Steps<Derived> {
  const postedAt = inOrder(columns.postedAt, salaryOrder)
  yield
  const expiresAt = inOrder(columns.expiresAt, salaryOrder)
  yield
  const salaryLow = inOrder(columns.salaryLow, salaryOrder)
  yield
  const salaryHigh = inOrder(columns.salaryHigh, salaryOrder)
  yield
  const expiries = sortedExpiries(columns.expiresAt)
  yield
  let byLowestSalary: Derived['byLowestSalary']
  if (salaryLowOrder) {
    if (salaryLowOrder.length !== n) throw new Error(`index: salary-low order has ${salaryLowOrder.length} of ${n}`)
    byLowestSalary = { order: salaryLowOrder, lows: lowestSalaries(columns.salaryLow, salaryLowOrder) }
  }
  return { bySalary: { postedAt, expiresAt, salaryLow, salaryHigh }, expiries, byLowestSalary }
}

/** Derived from what index/jobs.bin holds already (the build derived it). */
function storedDerived(stored: StoredDerivations, salaryLowOrder: Uint32Array): Derived {
  return {
    bySalary: stored.bySalary,
    expiries: stored.expiries,
    byLowestSalary: { order: salaryLowOrder, lows: stored.lowestSalaries },
  }
}

export class JobIndex implements RangeColumns {
  readonly size: number
  /** Epoch ms per position. */
  readonly postedAt: Float64Array
  /** Epoch ms per position; +Infinity when the job never expires. */
  readonly expiresAt: Float64Array
  /** Annualised USD per position; NaN when the job publishes no salary. */
  readonly salaryLow: Float64Array
  readonly salaryHigh: Float64Array
  readonly salaryOrder: Uint32Array
  /** Inverse of salaryOrder: the rank of each position in salary order. */
  readonly salaryRank: Uint32Array
  /**
   * The range columns again, indexed by salary rank: a salary-sorted walk
   * then reads memory in order instead of jumping around (at 100k jobs the
   * columns outgrow the CPU cache and random reads cost ~3x).
   */
  readonly bySalary: RangeColumns
  /** The same columns by date position, in an object of the same shape (keeps filter code monomorphic). */
  readonly byDate: RangeColumns
  /** Earliest expiry of any job: until then nothing in the snapshot has expired. */
  readonly firstExpiry: number
  /** Bitsets of this index's long posting lists (facets and full text alike), made as queries need them. */
  readonly bitsets: BitsetCache
  /** Every finite expires_at, ascending, to count expired jobs in O(log n). */
  private readonly expiries: Float64Array
  private readonly postings: PostingSource
  /** The lists long enough for a kept bitset, one object each: the bitset cache knows a list by its object. */
  private readonly longLists = new Map<string, Uint32Array>()
  private readonly slugs: SlugTable
  private readonly hashes: StringsByPosition
  private readonly ids: PackedStrings
  private readonly values: Record<ValueFacet, ValueColumn>

  /** Builds the whole index at once; a loader that must stay responsive feeds a JobIndexBuilder slice by slice instead. */
  static from(index: SnapshotJobIndex): JobIndex {
    const builder = new JobIndexBuilder(index.salary_order)
    builder.add(index.jobs)
    return builder.finish()
  }

  /**
   * The index as index/jobs.bin holds it: its arrays used as they are (views
   * on the file's bytes), nothing parsed, nothing sorted.
   */
  static fromFile(file: JobIndexFile): JobIndex {
    return runSteps(JobIndex.fromFileSteps(file))
  }

  /** fromFile in steps of tens of milliseconds at 1M jobs (a hot swap makes it between requests). */
  static *fromFileSteps(file: JobIndexFile): Steps<JobIndex> {
    const n = file.size
    const columns = {
      postedAt: file.postedAt,
      expiresAt: file.expiresAt,
      salaryLow: file.salaryLow,
      salaryHigh: file.salaryHigh,
    }
    // Made by the build when the file holds them (core/index-derivations.ts), else here.
    const stored = file.derived
    const salaryRank = stored?.salaryRank ?? salaryRankOf(file.salaryOrder)
    yield
    const hashes = yield* ChunkedStrings.inSteps(file.hashes)
    yield
    const slugs = yield* SlugTable.inSteps(file.slugs, undefined, stored?.slugSlots)
    const derived = stored
      ? storedDerived(stored, file.salaryLowOrder)
      : yield* derivedSteps(n, columns, file.salaryOrder, file.salaryLowOrder)
    return new JobIndex({
      size: n,
      hashes,
      ids: new PackedStrings(file.ids),
      values: Object.fromEntries(
        VALUE_FACETS.map((facet) => [facet, ValueColumn.of(file.codes[facet], file.values[facet])]),
      ) as Record<ValueFacet, ValueColumn>,
      columns,
      salaryOrder: file.salaryOrder,
      salaryRank,
      salaryLowOrder: file.salaryLowOrder,
      postings: file.postings,
      slugs,
      derived,
    })
  }

  /** Made by JobIndex.from, JobIndex.fromFile or JobIndexBuilder.finish. */
  constructor({
    size,
    hashes,
    ids,
    values,
    columns,
    salaryOrder,
    salaryRank,
    salaryLowOrder,
    postings,
    slugs,
    derived = runSteps(derivedSteps(size, columns, salaryOrder, salaryLowOrder)),
  }: JobIndexParts) {
    const n = size
    this.size = n
    this.hashes = hashes
    this.ids = ids
    this.values = values
    this.postedAt = columns.postedAt
    this.expiresAt = columns.expiresAt
    this.salaryLow = columns.salaryLow
    this.salaryHigh = columns.salaryHigh
    this.salaryOrder = salaryOrder
    this.salaryRank = salaryRank
    this.postings = postings
    this.slugs = slugs
    this.bitsets = new BitsetCache(n)
    this.byDate = {
      postedAt: this.postedAt,
      expiresAt: this.expiresAt,
      salaryLow: this.salaryLow,
      salaryHigh: this.salaryHigh,
    }
    this.bySalary = derived.bySalary
    this.expiries = derived.expiries
    this.firstExpiry = this.expiries[0] ?? Infinity
    this.byLowestSalary = derived.byLowestSalary
  }

  /** Positions holding `value` for `facet` (case-insensitive), ascending. */
  postingsFor(facet: Facet, value: string): Uint32Array | undefined {
    const key = `${facet}:${value.toLowerCase()}`
    const kept = this.longLists.get(key)
    if (kept) return kept
    const list = this.postings.get(key)
    if (list && this.bitsets.keepsBitsFor(list)) this.longLists.set(key, list)
    return list
  }

  private readonly vocabularies = new Map<Facet, string[]>()
  private sortedSlugs: string[] | undefined

  /** Every job's slug in code-point order, for prefix completion; computed on first use. */
  slugsInOrder(): string[] {
    this.sortedSlugs ??= [...new Set(Array.from({ length: this.slugs.size }, (_, p) => this.slugs.at(p)))].sort()
    return this.sortedSlugs
  }

  /** Every value `facet` takes in this snapshot (lowercase), for suggestions; computed once per facet. */
  valuesOf(facet: Facet): string[] {
    let values = this.vocabularies.get(facet)
    if (!values) {
      const prefix = `${facet}:`
      values = [...this.postings.keys()].filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length))
      this.vocabularies.set(facet, values)
    }
    return values
  }

  /** The countries some job's offices or remote listing name (`c:` place keys), as ISO codes. */
  countriesNamed(): CountryCode[] {
    return this.valuesOf('place').flatMap((key) => {
      const code = key.startsWith('c:') ? resolveCountry(key.slice(2)) : undefined
      return code ? [code] : []
    })
  }

  /** Content hash of the job's v2 body: its ETag. */
  hashAt(position: number): string {
    return this.hashes.at(position)
  }

  /** The job's id: ties in posted_at are ordered by it (ascending, by code unit). */
  idAt(position: number): string {
    return this.ids.at(position)
  }

  /** The job's value of a single-valued facet, as the dataset spells it (a company is its id). */
  valueAt(facet: ValueFacet, position: number): string | undefined {
    return this.values[facet].at(position)
  }

  positionOf(slug: string): number | undefined {
    return this.slugs.positionOf(slug)
  }

  /** How many jobs have expired by `now`: part of cache keys, so a cached page never outlives a job in it. */
  expiredCount(now: number): number {
    let low = 0
    let high = this.expiries.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (this.expiries[mid]! <= now) low = mid + 1
      else high = mid
    }
    return low
  }

  /** The latest expiry at or before `now` (epoch ms), or -Infinity: the last time the live jobs changed since the build. */
  lastExpiryBy(now: number): number {
    const expired = this.expiredCount(now)
    return expired === 0 ? Number.NEGATIVE_INFINITY : this.expiries[expired - 1]!
  }

  private live: { expired: number; bits: Uint32Array; count: number } | undefined

  /**
   * The positions not expired at `now`, as a bitset; made again, in the same
   * bitset, only when another job has expired (queries read it synchronously).
   */
  liveBits(now: number): { bits: Uint32Array; count: number } {
    const expired = this.expiredCount(now)
    if (this.live?.expired !== expired) {
      const bits = this.live ? this.live.bits.fill(0) : this.bitsets.keep()
      setWhere(bits, this.size, (p) => this.expiresAt[p]! > now)
      this.live = { expired, bits, count: countBits(bits, this.bitsets) }
    }
    return this.live
  }

  private byLowestSalary: { order: Uint32Array; lows: Float64Array } | undefined

  /**
   * Positions by bottom of salary range, lowest first, jobs without salary
   * last, and those bottoms in that order: salary_max keeps a prefix of it.
   * Sorted once (the snapshot loader asks for it), then kept.
   */
  salaryLowOrder(): { order: Uint32Array; lows: Float64Array } {
    if (this.byLowestSalary) return this.byLowestSalary
    const n = this.size
    const key = new Float64Array(n)
    for (let p = 0; p < n; p++) key[p] = Number.isNaN(this.salaryLow[p]!) ? Infinity : this.salaryLow[p]!
    const order = new Uint32Array(n)
    for (let p = 0; p < n; p++) order[p] = p
    order.sort((a, b) => key[a]! - key[b]! || a - b)
    const lows = new Float64Array(n)
    for (let rank = 0; rank < n; rank++) lows[rank] = key[order[rank]!]!
    this.byLowestSalary = { order, lows }
    return this.byLowestSalary
  }

  private highPrefixes: PrefixBits | undefined
  private lowPrefixes: PrefixBits | undefined

  /**
   * Prefixes of the salary orders as bitsets (salary_min keeps a prefix of
   * salaryOrder, salary_max one of salaryLowOrder), made on first use.
   */
  salaryPrefixes(): { high: PrefixBits; low: PrefixBits } {
    this.highPrefixes ??= new PrefixBits(this.salaryOrder, this.bitsets)
    this.lowPrefixes ??= new PrefixBits(this.salaryLowOrder().order, this.bitsets)
    return { high: this.highPrefixes, low: this.lowPrefixes }
  }

  /** salaryPrefixes with every checkpoint made, in steps: the loader asks for them, so no query waits on one. */
  *warmSalaryPrefixesSteps(): Steps<void> {
    const { high, low } = this.salaryPrefixes()
    yield* high.warmSteps()
    yield* low.warmSteps()
  }

  isExpired(position: number, now: number): boolean {
    return this.expiresAt[position]! <= now
  }

  /** Whether some job with `value` is still live at `now` (stops at the first; a job may expire between builds). */
  hasLiveJob(facet: Facet, value: string, now: number): boolean {
    const postings = this.postingsFor(facet, value)
    if (!postings) return false
    if (now < this.firstExpiry) return true
    for (const position of postings) if (this.expiresAt[position]! > now) return true
    return false
  }

  /** The slugs of the jobs expired by `now` (a scan of every job, so only when expiredCount says there are some). */
  expiredSlugs(now: number): string[] {
    if (this.expiredCount(now) === 0) return []
    const slugs: string[] = []
    for (let position = 0; position < this.expiresAt.length; position++)
      if (this.expiresAt[position]! <= now) slugs.push(this.slugs.at(position)!)
    return slugs
  }
}

/**
 * Builds a JobIndex from jobs given in date order, a slice at a time: at
 * 100k jobs the whole build takes ~400 ms, and a server swapping snapshots
 * under load yields to requests between slices instead of stalling them.
 */
export class JobIndexBuilder {
  private readonly size: number
  /** Jobs added so far: the next one's position. */
  private count = 0
  private readonly hashes: string[] = []
  private readonly ids: string[] = []
  private readonly values: Record<ValueFacet, ValueColumn>
  private readonly columns: RangeColumns
  private readonly salaryOrder: Uint32Array
  private readonly salaryRank: Uint32Array
  private readonly slugs: string[] = []
  /** Per facet, value -> positions. Values are lowercased once per distinct value (in finish), not once per job. */
  private readonly lists = new Map<Facet, Map<string, number[]>>()

  /** `salaryOrder`: positions highest salary first; its length is the number of jobs to come. */
  constructor(salaryOrder: ArrayLike<number>) {
    const n = salaryOrder.length
    this.size = n
    this.salaryOrder = Uint32Array.from(salaryOrder)
    this.columns = {
      postedAt: new Float64Array(n),
      expiresAt: new Float64Array(n),
      salaryLow: new Float64Array(n),
      salaryHigh: new Float64Array(n),
    }
    this.values = Object.fromEntries(
      VALUE_FACETS.map((facet) => [facet, new ValueColumn(new Uint32Array(n))]),
    ) as Record<ValueFacet, ValueColumn>
    this.salaryRank = salaryRankOf(this.salaryOrder)
  }

  /** Appends the next jobs in date order. */
  add(jobs: readonly IndexedJob[]): void {
    if (this.count + jobs.length > this.size)
      throw new Error(`index: more jobs than the ${this.size} positions in salary_order`)
    const { postedAt, expiresAt, salaryLow, salaryHigh } = this.columns
    const { category, level, work_arrangement, company } = this.values
    for (const job of jobs) {
      const p = this.count++
      this.hashes.push(job.hash)
      this.ids.push(job.id)
      category.set(p, job.category)
      level.set(p, job.level)
      work_arrangement.set(p, job.work_arrangement)
      company.set(p, job.company_id)
      this.slugs.push(job.slug)
      postedAt[p] = job.posted_at
      expiresAt[p] = job.expires_at ?? Infinity
      salaryLow[p] = job.salary_low ?? NaN
      salaryHigh[p] = job.salary_high ?? NaN
      this.addPosting('category', job.category, p)
      this.addPosting('level', job.level, p)
      this.addPosting('schedule', job.schedule, p)
      this.addPosting('work_arrangement', job.work_arrangement, p)
      this.addPosting('company', job.company_id, p)
      for (const tag of job.tags) this.addPosting('tag', tag, p)
      for (const place of job.places) this.addPosting('place', place, p)
    }
  }

  finish(): JobIndex {
    if (this.count !== this.size)
      throw new Error(`index: salary_order has ${this.size} positions, there are ${this.count} jobs`)
    const postings = new Map<string, Uint32Array>()
    for (const [facet, byValue] of this.lists) {
      for (const [value, list] of byValue) {
        const key = `${facet}:${value.toLowerCase()}`
        const existing = postings.get(key)
        // Two spellings of one value (case only) share a key: merge, keeping positions ascending.
        postings.set(key, existing ? Uint32Array.from(new Set([...existing, ...list])).sort() : Uint32Array.from(list))
      }
    }
    return new JobIndex({
      size: this.size,
      hashes: PackedStrings.from(this.hashes),
      ids: PackedStrings.from(this.ids),
      values: this.values,
      columns: this.columns,
      salaryOrder: this.salaryOrder,
      salaryRank: this.salaryRank,
      postings,
      slugs: new SlugTable(this.slugs),
    })
  }

  private addPosting(facet: Facet, value: string | undefined, position: number): void {
    addPosting(this.lists, facet, value, position)
  }
}

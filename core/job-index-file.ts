/**
 * index/jobs.bin: the job index as the server holds it in memory, written
 * once by the build so that a server loads it as typed arrays over the bytes
 * read (no JSON parsing, no object per job, no sorting): at 1M jobs parsing
 * index/jobs.json took most of a worker's 12-18 s start and left hundreds of
 * megabytes of garbage behind. Builds no longer write index/jobs.json (a
 * server still loads it from a snapshot built before index/jobs.bin existed).
 *
 * Layout (little-endian): the 8 bytes `JOBSNAPI`, a uint32 length, that many
 * bytes of JSON (JobIndexFileHead: counts, the value vocabularies, the
 * posting-list keys and where each section starts), zero bytes to a multiple
 * of 8, then the sections, each starting at a multiple of 8.
 */
import { endianness } from 'node:os'
import { inOrder, lowestSalaries, orderByKey, salaryRankOf, sortedExpiries } from './index-derivations.ts'
import { joinedString, type PackedText, packedJoined, textSlice } from './packed-text.ts'
import { slugSlotCount, slugSlotsSteps } from './slug-slots.ts'
import type { IndexedJob } from './snapshot.ts'
import { runSteps, type Steps } from './steps.ts'

const MAGIC = 'JOBSNAPI'

/** Single-valued facets kept per job as a code (0: none, else 1 + index into the vocabulary). */
export const VALUE_FACETS = ['category', 'level', 'work_arrangement', 'company'] as const
export type ValueFacet = (typeof VALUE_FACETS)[number]

const FLOAT_SECTIONS = ['postedAt', 'expiresAt', 'salaryLow', 'salaryHigh'] as const
const UINT_SECTIONS = [
  'salaryOrder',
  'salaryLowOrder',
  'category',
  'level',
  'work_arrangement',
  'company',
  'postingCounts',
  'postings',
  'hashOffsets',
  'slugOffsets',
  'idOffsets',
] as const
const TEXT_SECTIONS = ['hashes', 'slugs', 'ids'] as const
/**
 * What the build derives once so that a server need not at every load (core/index-derivations.ts,
 * core/slug-slots.ts): a file without them (an older build) loads too, the server deriving them.
 */
const DERIVED_SECTIONS = [
  'salaryRank',
  'bySalaryPostedAt',
  'bySalaryExpiresAt',
  'bySalarySalaryLow',
  'bySalarySalaryHigh',
  'expiries',
  'lowestSalaries',
  'slugSlots',
] as const
type Section =
  | (typeof FLOAT_SECTIONS)[number]
  | (typeof UINT_SECTIONS)[number]
  | (typeof TEXT_SECTIONS)[number]
  | (typeof DERIVED_SECTIONS)[number]

interface JobIndexFileHead {
  jobs: number
  /** Per value facet, the values as the dataset spells them, by code - 1. */
  values: Record<ValueFacet, string[]>
  /** Posting-list keys (`facet:lowercased value`), in the order of postingCounts. */
  keys: string[]
  /** Section -> [byte offset from the file's start, byte length]. */
  sections: Record<Section, [number, number]>
}

/** What a server builds its job index from: views on the file's bytes wherever they can be. */
export interface JobIndexFile {
  size: number
  /** Epoch ms; expiresAt +Infinity for never, salaries NaN for none (annualised USD). */
  postedAt: Float64Array
  expiresAt: Float64Array
  salaryLow: Float64Array
  salaryHigh: Float64Array
  /** Positions, highest salary first (see salaryOrder in build/index-jobs.ts). */
  salaryOrder: Uint32Array
  /** Positions by bottom of salary range, lowest first, no salary last, ties by position. */
  salaryLowOrder: Uint32Array
  codes: Record<ValueFacet, Uint32Array>
  values: Record<ValueFacet, string[]>
  /** `facet:lowercased value` -> ascending positions. */
  postings: PostingLists
  /** Every job's hash, joined, with offsets (UTF-16 code units) per position: views on the file's bytes when ASCII. */
  hashes: PackedText
  slugs: PackedText
  /** Job ids (the date order's tie-break, which cursors carry), likewise. */
  ids: PackedText
  /** What the build derived (DERIVED_SECTIONS), when the file holds all of it. */
  derived?: StoredDerivations
}

/** The arrays DERIVED_SECTIONS hold. */
export interface StoredDerivations {
  /** salaryRankOf(salaryOrder). */
  salaryRank: Uint32Array
  /** The range columns in salary order (inOrder). */
  bySalary: { postedAt: Float64Array; expiresAt: Float64Array; salaryLow: Float64Array; salaryHigh: Float64Array }
  /** sortedExpiries(expiresAt). */
  expiries: Float64Array
  /** lowestSalaries(salaryLow, salaryLowOrder). */
  lowestSalaries: Float64Array
  /** The slug table's slots (core/slug-slots.ts). */
  slugSlots: Int32Array
}

type PostingFacet = 'category' | 'level' | 'schedule' | 'work_arrangement' | 'tag' | 'place' | 'company'

/**
 * Collects the jobs in date order and writes index/jobs.bin; the posting
 * lists and value codes are made as the server made them from
 * index/jobs.json (runtime/query/job-index.ts), so both give one index.
 */
export class JobIndexFileWriter {
  private count = 0
  private readonly floats: Record<(typeof FLOAT_SECTIONS)[number], Float64Array>
  private readonly codes: Record<ValueFacet, Uint32Array>
  private readonly vocabularies = Object.fromEntries(VALUE_FACETS.map((f) => [f, new Map<string, number>()])) as Record<
    ValueFacet,
    Map<string, number>
  >
  private readonly postings: PostingCollector
  private readonly hashes: TextColumn
  private readonly slugs: TextColumn
  private readonly ids: TextColumn
  /** While jobs are copied from a previous file (addPrevious): what was looked up already. */
  private copying: CopyState | undefined

  constructor(private readonly size: number) {
    this.hashes = new TextColumn(size)
    this.slugs = new TextColumn(size)
    this.ids = new TextColumn(size)
    this.floats = Object.fromEntries(FLOAT_SECTIONS.map((s) => [s, new Float64Array(size)])) as typeof this.floats
    this.codes = Object.fromEntries(VALUE_FACETS.map((f) => [f, new Uint32Array(size)])) as typeof this.codes
    this.postings = new PostingCollector(size)
  }

  /** The next job in date order. */
  add(job: IndexedJob): void {
    const p = this.count++
    if (p >= this.size) throw new Error(`job index: more than the ${this.size} jobs announced`)
    this.hashes.push(job.hash)
    this.slugs.push(job.slug)
    this.ids.push(job.id)
    this.floats.postedAt[p] = job.posted_at
    this.floats.expiresAt[p] = job.expires_at ?? Infinity
    this.floats.salaryLow[p] = job.salary_low ?? NaN
    this.floats.salaryHigh[p] = job.salary_high ?? NaN
    this.code('category', p, job.category)
    this.code('level', p, job.level)
    this.code('work_arrangement', p, job.work_arrangement)
    this.code('company', p, job.company_id)
    this.posting('category', job.category, p)
    this.posting('level', job.level, p)
    this.posting('schedule', job.schedule, p)
    this.posting('work_arrangement', job.work_arrangement, p)
    this.posting('company', job.company_id, p)
    for (const tag of job.tags) this.posting('tag', tag, p)
    for (const place of job.places) this.posting('place', place, p)
  }

  /**
   * The next job in date order, copied from a previous index/jobs.bin where it was at
   * `position`: the same as `add` given its entry of index/jobs.json, without parsing it. The
   * one thing that file does not keep is the order of a job's tags (and places): it decides
   * the order of the posting lists when two of them first appear at that job, and then the
   * entry is parsed after all (`entry`), which happens for few jobs, the vocabulary being
   * mostly seen by then.
   */
  addPrevious(previous: PreviousJobIndex, position: number, entry: () => IndexedJob): void {
    const from = this.copying?.from === previous ? this.copying : this.startCopying(previous)
    if (this.unlisted(from, 1, position) > 1 || this.unlisted(from, 2, position) > 1) {
      this.add(entry())
      return
    }
    const p = this.count++
    if (p >= this.size) throw new Error(`job index: more than the ${this.size} jobs announced`)
    const { file } = previous
    this.hashes.copy(file.hashes, position)
    this.slugs.copy(file.slugs, position)
    this.ids.copy(file.ids, position)
    this.floats.postedAt[p] = file.postedAt[position]!
    this.floats.expiresAt[p] = file.expiresAt[position]!
    this.floats.salaryLow[p] = file.salaryLow[position]!
    this.floats.salaryHigh[p] = file.salaryHigh[position]!
    // In add's order (category, level, schedule, work_arrangement, company, tags, places), so that
    // every value and list is first made where add would make it.
    this.copyValue(from, 0, position, p)
    this.copyValue(from, 1, position, p)
    this.copyKeyOnly(from, 0, position, p)
    this.copyValue(from, 2, position, p)
    this.copyValue(from, 3, position, p)
    this.copyKeyOnly(from, 1, position, p)
    this.copyKeyOnly(from, 2, position, p)
  }

  private startCopying(from: PreviousJobIndex): CopyState {
    this.copying = {
      from,
      previousCodes: VALUE_FACETS.map((facet) => from.file.codes[facet]),
      writerCodes: VALUE_FACETS.map((facet) => this.codes[facet]),
      codes: VALUE_FACETS.map((facet) => new Uint32Array(from.file.values[facet].length + 1)),
      valueLists: VALUE_FACETS.map((facet) => new Int32Array(from.file.values[facet].length + 1).fill(-1)),
      keyLists: from.byJob.map(({ values }) => new Int32Array(values.length).fill(-1)),
    }
    return this.copying
  }

  /** A value facet's code and posting for the job at `position` of the previous file, at `p`. */
  private copyValue(state: CopyState, f: number, position: number, p: number): void {
    const previousCode = state.previousCodes[f]![position]!
    if (previousCode === 0) return
    const code = state.codes[f]![previousCode]!
    const list = state.valueLists[f]![previousCode]!
    if (code === 0 || list < 0) {
      const facet = VALUE_FACETS[f]!
      const value = state.from.file.values[facet][previousCode - 1]!
      this.code(facet, p, value)
      state.codes[f]![previousCode] = this.codes[facet][p]!
      state.valueLists[f]![previousCode] = this.postings.add(facet, value, p)
      return
    }
    state.writerCodes[f]![p] = code
    this.postings.addTo(list, p)
  }

  /** A key-only facet's postings for the job at `position` of the previous file, at `p`. */
  private copyKeyOnly(state: CopyState, k: number, position: number, p: number): void {
    const facet = KEY_ONLY_FACETS[k]!
    const { starts, ids, values } = state.from.byJob[k]!
    const lists = state.keyLists[k]!
    for (let i = starts[position]!; i < starts[position + 1]!; i++) {
      const id = ids[i]!
      const list = lists[id]!
      if (list < 0) lists[id] = this.postings.add(facet, values[id]!, p)
      else this.postings.addTo(list, p)
    }
  }

  /** How many of the job's values of a key-only facet have no posting list yet (any other spelling counts as none). */
  private unlisted(state: CopyState, k: number, position: number): number {
    const { starts, ids, values } = state.from.byJob[k]!
    const lists = state.keyLists[k]!
    let count = 0
    for (let i = starts[position]!; i < starts[position + 1]!; i++) {
      const id = ids[i]!
      if (lists[id]! >= 0) continue
      const list = this.postings.idOf(KEY_ONLY_FACETS[k]!, values[id]!)
      if (list === undefined) count++
      else lists[id] = list
    }
    return count
  }

  /**
   * The file's bytes, in parts to write one after the other; `salaryOrder` as index/jobs.json has it.
   * Once: the writer lets go of what the parts do not hold.
   */
  finish(salaryOrder: ArrayLike<number>): Buffer[] {
    if (this.count !== this.size) throw new Error(`job index: ${this.count} jobs of the ${this.size} announced`)
    const n = this.size
    const { keys, postingCounts, allPostings } = this.postings.finish()
    // Not needed any more: the copying's state.
    this.copying = undefined
    const lowKey = new Float64Array(n)
    for (let p = 0; p < n; p++) {
      const low = this.floats.salaryLow[p]!
      lowKey[p] = Number.isNaN(low) ? Infinity : low
    }
    const salaryLowOrder = orderByKey(lowKey)
    const hashes = this.hashes.packed()
    const slugs = this.slugs.packed()
    const ids = this.ids.packed()
    const order = Uint32Array.from(salaryOrder)
    const { postedAt, expiresAt, salaryLow, salaryHigh } = this.floats
    // The slugs as a server reads them (core/packed-text.ts), since the table hashes their UTF-16 code units.
    const slugText = { joined: joinedString(packedJoined(slugs.bytes, 0, slugs.bytes.length)), offsets: slugs.offsets }
    const bodies: Record<Section, ArrayBufferView> = {
      ...this.floats,
      salaryOrder: order,
      salaryLowOrder,
      ...this.codes,
      postingCounts,
      postings: allPostings,
      salaryRank: salaryRankOf(order),
      bySalaryPostedAt: inOrder(postedAt, order),
      bySalaryExpiresAt: inOrder(expiresAt, order),
      bySalarySalaryLow: inOrder(salaryLow, order),
      bySalarySalaryHigh: inOrder(salaryHigh, order),
      expiries: sortedExpiries(expiresAt),
      lowestSalaries: lowestSalaries(salaryLow, salaryLowOrder),
      slugSlots: runSteps(slugSlotsSteps(slugText)),
      hashOffsets: hashes.offsets,
      slugOffsets: slugs.offsets,
      idOffsets: ids.offsets,
      hashes: hashes.bytes,
      slugs: slugs.bytes,
      ids: ids.bytes,
    }
    const values = Object.fromEntries(VALUE_FACETS.map((f) => [f, [...this.vocabularies[f].keys()]])) as Record<
      ValueFacet,
      string[]
    >
    // The head holds the sections' offsets, which depend on its own length: lay out with a fixed-width placeholder.
    const names = Object.keys(bodies) as Section[]
    const lay = (headLength: number) => {
      const sections = {} as Record<Section, [number, number]>
      let offset = align8(MAGIC.length + 4 + headLength)
      for (const name of names) {
        sections[name] = [offset, bodies[name].byteLength]
        offset = align8(offset + bodies[name].byteLength)
      }
      return sections
    }
    let headLength = 0
    let head = ''
    for (;;) {
      head = JSON.stringify({ jobs: n, values, keys, sections: lay(headLength) } satisfies JobIndexFileHead)
      const length = Buffer.byteLength(head)
      if (length === headLength) break
      headLength = length
    }
    const prefix = Buffer.alloc(align8(MAGIC.length + 4 + headLength))
    prefix.write(MAGIC, 0, 'latin1')
    prefix.writeUInt32LE(headLength, MAGIC.length)
    prefix.write(head, MAGIC.length + 4, 'utf8')
    const parts: Buffer[] = [prefix]
    for (const name of names) {
      const view = bodies[name]
      const bytes = Buffer.from(view.buffer, view.byteOffset, view.byteLength)
      parts.push(endianness() === 'LE' ? bytes : swapped(view))
      const padding = align8(bytes.length) - bytes.length
      if (padding > 0) parts.push(Buffer.alloc(padding))
    }
    return parts
  }

  private code(facet: ValueFacet, position: number, value: string | undefined): void {
    if (value === undefined) return
    const vocabulary = this.vocabularies[facet]
    let code = vocabulary.get(value)
    if (code === undefined) {
      code = vocabulary.size + 1
      vocabulary.set(value, code)
    }
    this.codes[facet][position] = code
  }

  private posting(facet: PostingFacet, value: string | undefined, position: number): void {
    if (value !== undefined) this.postings.add(facet, value, position)
  }
}

/**
 * The posting lists as the writer collects them: the list of each job's values, one id per list, in one
 * growing array, turned into the lists by a count and a fill at the end. A number pushed onto a JS array
 * per list and job was ~5 s of a 1M-job 1% rebuild's own thread, and millions of elements for the collector.
 * The lists come out as they were: keyed `facet:lowercased value` in the order each facet, then each of its
 * values, first appeared; two spellings of a value (case only) merged into one list, positions ascending.
 */
class PostingCollector {
  /** By facet, in the order facets first appeared: each value's list id, in the order values first appeared. */
  private readonly idsByFacet = new Map<PostingFacet, Map<string, number>>()
  private listCount = 0
  /** The last position added to each list (no position twice in a list). */
  private lastAdded = new Int32Array(1024).fill(-1)
  /** List ids, job after job; job p's are ids[jobStarts[p]..jobStarts[p + 1]]. */
  private ids = new Uint32Array(1 << 16)
  private idCount = 0
  private readonly jobStarts: Uint32Array
  /** The last position whose start is set in jobStarts. */
  private job = 0

  constructor(private readonly size: number) {
    this.jobStarts = new Uint32Array(size + 1)
  }

  /** The id of facet's list for `value` as spelled, if it has one. */
  idOf(facet: PostingFacet, value: string): number | undefined {
    return this.idsByFacet.get(facet)?.get(value)
  }

  /** Adds `position` (positions come ascending) to facet's list for `value`; returns the list's id. */
  add(facet: PostingFacet, value: string, position: number): number {
    let byValue = this.idsByFacet.get(facet)
    if (!byValue) {
      byValue = new Map()
      this.idsByFacet.set(facet, byValue)
    }
    let id = byValue.get(value)
    if (id === undefined) {
      id = this.listCount++
      byValue.set(value, id)
      if (id >= this.lastAdded.length) {
        const grown = new Int32Array(this.lastAdded.length * 2).fill(-1)
        grown.set(this.lastAdded)
        this.lastAdded = grown
      }
    }
    this.addTo(id, position)
    return id
  }

  /** Adds `position` to list `id` (from add). */
  addTo(id: number, position: number): void {
    if (this.lastAdded[id] === position) return
    this.lastAdded[id] = position
    while (this.job < position) this.jobStarts[++this.job] = this.idCount
    if (this.idCount === this.ids.length) {
      const grown = new Uint32Array(this.ids.length * 2)
      grown.set(this.ids)
      this.ids = grown
    }
    this.ids[this.idCount++] = id
  }

  /** The keys, each one's count and all their positions (list after list): once, at the end. */
  finish(): { keys: string[]; postingCounts: Uint32Array; allPostings: Uint32Array } {
    while (this.job < this.size) this.jobStarts[++this.job] = this.idCount
    const keyIndex = new Map<string, number>()
    const keyOf = new Uint32Array(this.listCount)
    for (const [facet, byValue] of this.idsByFacet)
      for (const [value, id] of byValue) {
        const key = `${facet}:${value.toLowerCase()}`
        let k = keyIndex.get(key)
        if (k === undefined) {
          k = keyIndex.size
          keyIndex.set(key, k)
        }
        keyOf[id] = k
      }
    const keys = [...keyIndex.keys()]
    // Two passes over the jobs in order, so each key's positions ascend; a job in two spellings' lists counts once.
    const lastPosition = new Int32Array(keys.length).fill(-1)
    const postingCounts = new Uint32Array(keys.length)
    const { ids, jobStarts } = this
    for (let p = 0; p < this.size; p++)
      for (let i = jobStarts[p]!; i < jobStarts[p + 1]!; i++) {
        const k = keyOf[ids[i]!]!
        if (lastPosition[k] === p) continue
        lastPosition[k] = p
        postingCounts[k]!++
      }
    const next = new Float64Array(keys.length)
    let total = 0
    for (let k = 0; k < keys.length; k++) {
      next[k] = total
      total += postingCounts[k]!
    }
    const allPostings = new Uint32Array(total)
    lastPosition.fill(-1)
    for (let p = 0; p < this.size; p++)
      for (let i = jobStarts[p]!; i < jobStarts[p + 1]!; i++) {
        const k = keyOf[ids[i]!]!
        if (lastPosition[k] === p) continue
        lastPosition[k] = p
        allPostings[next[k]!++] = p
      }
    // Not needed any more (tens of MB at 1M jobs).
    this.ids = new Uint32Array(0)
    this.idsByFacet.clear()
    return { keys, postingCounts, allPostings }
  }
}

/** Posting facets kept in index/jobs.bin only as posting-list keys (not as per-job codes), in add's order. */
const KEY_ONLY_FACETS = ['schedule', 'tag', 'place'] as const

/** What JobIndexFileWriter.addPrevious has looked up: by facet, then by previous code or value id. */
interface CopyState {
  from: PreviousJobIndex
  /** By facet: the previous file's codes, and the writer's. */
  previousCodes: Uint32Array[]
  writerCodes: Uint32Array[]
  /** The writer's code for each previous code (0: not yet known). */
  codes: Uint32Array[]
  /** The writer's posting list id for each previous code (-1: not yet known). */
  valueLists: Int32Array[]
  /** Likewise for each value of a key-only facet. */
  keyLists: Int32Array[]
}

/**
 * The posting lists of index/jobs.bin: `facet:lowercased value` -> ascending
 * positions, each a view on the one array of all postings, made when asked
 * for. At 1M jobs there are ~60,000 lists (50,000 of them one company's
 * jobs); as views made up front they were that many long-lived objects that
 * every full collection visited (a quarter of a loaded snapshot's full
 * collection). A fresh view each call: a holder that needs one object per
 * list keeps those it needs.
 */
/** Posting-list keys whose lookup is filled per step of a load. */
const KEYS_PER_STEP = 16_384

export class PostingLists {
  private readonly indexOf = new Map<string, number>()
  private readonly starts: Uint32Array

  private constructor(
    keys: readonly string[],
    private readonly all: Uint32Array,
  ) {
    this.starts = new Uint32Array(keys.length + 1)
  }

  /**
   * The lists of `keys` (in order, `counts[k]` positions each, end to end in `all`), their lookup filled a
   * slice of keys per step: at 1M jobs the ~50,000 keys were ~10 ms of one step.
   */
  static *inSteps(keys: readonly string[], counts: Uint32Array, all: Uint32Array): Steps<PostingLists> {
    const lists = new PostingLists(keys, all)
    for (let from = 0; from < keys.length; from += KEYS_PER_STEP) {
      if (from > 0) yield
      for (let k = from, to = Math.min(keys.length, from + KEYS_PER_STEP); k < to; k++) {
        lists.starts[k + 1] = lists.starts[k]! + counts[k]!
        lists.indexOf.set(keys[k]!, k)
      }
    }
    return lists
  }

  /** How many positions the lists hold in all. */
  get total(): number {
    return this.starts[this.starts.length - 1]!
  }

  get(key: string): Uint32Array | undefined {
    const k = this.indexOf.get(key)
    return k === undefined ? undefined : this.all.subarray(this.starts[k], this.starts[k + 1])
  }

  keys(): IterableIterator<string> {
    return this.indexOf.keys()
  }

  *[Symbol.iterator](): IterableIterator<[string, Uint32Array]> {
    for (const [key, k] of this.indexOf) yield [key, this.all.subarray(this.starts[k], this.starts[k + 1])]
  }
}

/**
 * A previous index/jobs.bin read for JobIndexFileWriter.addPrevious: its jobs, with the
 * posting lists of the facets that have no per-job code turned around into each job's
 * values (lowercased, as the keys hold them: a key's place among the keys and its positions
 * come out the same as with the dataset's spelling, since the writer lowercases them).
 */
export class PreviousJobIndex {
  /** By KEY_ONLY_FACETS: the values of the job at position q are values[ids[starts[q]..starts[q + 1]]]. */
  readonly byJob: { starts: Uint32Array; ids: Uint32Array; values: string[] }[]

  constructor(readonly file: JobIndexFile) {
    const n = file.size
    this.byJob = KEY_ONLY_FACETS.map((facet) => {
      const prefix = `${facet}:`
      const values: string[] = []
      const postings: Uint32Array[] = []
      for (const [key, positions] of file.postings) {
        if (!key.startsWith(prefix)) continue
        values.push(key.slice(prefix.length))
        postings.push(positions)
      }
      const starts = new Uint32Array(n + 1)
      for (const positions of postings) for (const q of positions) starts[q + 1]!++
      for (let q = 0; q < n; q++) starts[q + 1]! += starts[q]!
      const next = starts.slice(0, n)
      const ids = new Uint32Array(starts[n]!)
      for (let v = 0; v < postings.length; v++) for (const q of postings[v]!) ids[next[q]!++] = v
      return { starts, ids, values }
    })
  }

  get size(): number {
    return this.file.size
  }
}

/**
 * One text section (hashes, slugs or ids) as the writer collects it: strings added one by one,
 * or strings of a previous file's section, where consecutive ones are kept as one range of it
 * (no string per job: at 1M jobs, three million small strings kept to the end were a large
 * share of what the collector traced).
 */
class TextColumn {
  private readonly parts: string[] = []
  private readonly lengths: Uint32Array
  private count = 0
  /** The range of a previous section being extended, not yet in parts. */
  private from: PackedText | undefined
  private start = 0
  private end = 0

  constructor(size: number) {
    this.lengths = new Uint32Array(size)
  }

  push(text: string): void {
    this.close()
    this.parts.push(text)
    this.lengths[this.count++] = text.length
  }

  /** Adds the string at `position` of a previous file's section. */
  copy(section: PackedText, position: number): void {
    const start = section.offsets[position]!
    if (this.from !== section || this.end !== start) {
      this.close()
      this.from = section
      this.start = start
    }
    this.end = section.offsets[position + 1]!
    this.lengths[this.count++] = this.end - start
  }

  /** The section's bytes (UTF-8) and each string's offset in UTF-16 code units, as readJobIndexFile reads them. */
  packed(): { bytes: Buffer; offsets: Uint32Array } {
    this.close()
    const offsets = new Uint32Array(this.count + 1)
    for (let i = 0; i < this.count; i++) offsets[i + 1] = offsets[i]! + this.lengths[i]!
    const bytes = Buffer.from(this.parts.join(''), 'utf8')
    // A million strings at 1M jobs, not needed once packed: freed before the build's next index files.
    this.parts.length = 0
    return { bytes, offsets }
  }

  private close(): void {
    if (this.from === undefined) return
    this.parts.push(textSlice(this.from.joined, this.start, this.end))
    this.from = undefined
  }
}

function align8(n: number): number {
  return (n + 7) & ~7
}

/** A typed array's bytes in little-endian order, on a big-endian machine. */
function swapped(view: ArrayBufferView): Buffer {
  const bytes = Buffer.from(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength))
  if (view instanceof Float64Array) bytes.swap64()
  else if (view instanceof Uint32Array) bytes.swap32()
  return bytes
}

/**
 * Reads index/jobs.bin (its hash already checked against the manifest: the
 * build made it from validated data), checking that its sections fit
 * together. The arrays and the ASCII text are views on `bytes`, which they
 * keep (copies of the arrays on a big-endian machine).
 */
export function readJobIndexFile(bytes: Buffer, what: string): JobIndexFile {
  const head = readJobIndexHead(bytes, bytes.length, what)
  return runSteps(readJobIndexPartsSteps(bytes.subarray(0, head.textStart), bytes.subarray(head.textStart), what, head))
}

/** Bytes at the start of index/jobs.bin that give the length of its head: the magic and a uint32. */
export const JOB_INDEX_PREFIX_BYTES = MAGIC.length + 4

/** The head of index/jobs.bin, from bytes that start with it. */
function readHead(bytes: Buffer, fileBytes: number, fail: (why: string) => never): JobIndexFileHead {
  if (bytes.length < JOB_INDEX_PREFIX_BYTES || bytes.toString('latin1', 0, MAGIC.length) !== MAGIC)
    fail('not a job index file')
  const headLength = bytes.readUInt32LE(MAGIC.length)
  if (JOB_INDEX_PREFIX_BYTES + headLength > Math.min(bytes.length, fileBytes)) fail('its head runs past the end')
  return JSON.parse(
    bytes.toString('utf8', JOB_INDEX_PREFIX_BYTES, JOB_INDEX_PREFIX_BYTES + headLength),
  ) as JobIndexFileHead
}

function failing(what: string): (why: string) => never {
  return (why) => {
    throw new Error(`${what}: ${why}`)
  }
}

/**
 * index/jobs.bin's head, parsed from the file's first jobIndexHeadBytes bytes (`bytes`), and where its text
 * sections (the last ones) start: a reader can read the numeric part and the text into buffers of their own,
 * rather than the whole file and then a copy, and hand the head on (readJobIndexPartsSteps) rather than
 * parse it twice (4 MB of JSON at 1M jobs, ~10 ms each time).
 */
export interface JobIndexHead {
  /** The head's bytes as read, which the numeric part read later must start with. */
  readonly bytes: Buffer
  readonly parsed: JobIndexFileHead
  readonly textStart: number
}

export function readJobIndexHead(bytes: Buffer, fileBytes: number, what: string): JobIndexHead {
  const parsed = readHead(bytes, fileBytes, failing(what))
  const textStart = Math.min(fileBytes, ...TEXT_SECTIONS.map((name) => parsed.sections?.[name]?.[0] ?? fileBytes))
  return { bytes: bytes.subarray(0, JOB_INDEX_PREFIX_BYTES + bytes.readUInt32LE(MAGIC.length)), parsed, textStart }
}

/** How many bytes from the start of index/jobs.bin hold its head, from its first JOB_INDEX_PREFIX_BYTES. */
export function jobIndexHeadBytes(prefix: Buffer, what: string): number {
  if (prefix.length < JOB_INDEX_PREFIX_BYTES || prefix.toString('latin1', 0, MAGIC.length) !== MAGIC)
    failing(what)('not a job index file')
  return JOB_INDEX_PREFIX_BYTES + prefix.readUInt32LE(MAGIC.length)
}

/**
 * index/jobs.bin read as two buffers: `numeric`, its bytes up to where the
 * text sections start (readJobIndexHead), which the arrays are views on,
 * and `text`, the rest, which the slugs and ids are views on when ASCII
 * (core/packed-text.ts): both must be buffers of their own, not reused. In
 * steps: it yields after each text section. `head`, when given, is the head
 * as readJobIndexHead read it (checked to be the one `numeric` starts with).
 */
export function* readJobIndexPartsSteps(
  numeric: Buffer,
  text: Buffer,
  what: string,
  read?: JobIndexHead,
): Steps<JobIndexFile> {
  const fail = failing(what)
  const textStart = numeric.length
  if (read !== undefined && !numeric.subarray(0, read.bytes.length).equals(read.bytes))
    fail('its head changed while it was read')
  const head = read?.parsed ?? readHead(numeric, textStart + text.length, fail)
  const n = head.jobs
  if (!Number.isInteger(n) || n < 0) fail('no job count')
  // Offsets from the file's start; the views are aligned where the copy's start is (a large copy always is).
  const section = (from: Buffer, fromOffset: number, name: Section, unit: number, count?: number): [number, number] => {
    const found = head.sections?.[name]
    if (!found) return fail(`no ${name} section`)
    const [fileOffset, length] = found
    const offset = fileOffset - fromOffset
    if (
      offset < 0 ||
      offset + length > from.length ||
      length % unit !== 0 ||
      (count !== undefined && length / unit !== count)
    )
      fail(`its ${name} section does not fit`)
    return [offset, length / unit]
  }
  /** A float section of n values, or of any number with `count` null. */
  const floats = (name: Section, count: number | null = n) => {
    const [offset, length] = section(numeric, 0, name, 8, count ?? undefined)
    const at = numeric.byteOffset + offset
    if (endianness() === 'LE' && at % 8 === 0) return new Float64Array(numeric.buffer, at, length)
    const copy = new Float64Array(length)
    for (let i = 0; i < length; i++) copy[i] = numeric.readDoubleLE(offset + i * 8)
    return copy
  }
  const uints = (name: Section, count?: number) => {
    const [offset, length] = section(numeric, 0, name, 4, count)
    const at = numeric.byteOffset + offset
    if (endianness() === 'LE' && at % 4 === 0) return new Uint32Array(numeric.buffer, at, length)
    const copy = new Uint32Array(length)
    for (let i = 0; i < length; i++) copy[i] = numeric.readUInt32LE(offset + i * 4)
    return copy
  }
  /** A text section, kept as the bytes read when ASCII (core/packed-text.ts). */
  const decoded = (name: Section, offsetsName: Section) => {
    const offsets = uints(offsetsName, n + 1)
    const [offset, length] = section(text, textStart, name, 1)
    const joined = packedJoined(text, offset, offset + length)
    if (offsets[n] !== joined.length) fail(`its ${name} offsets do not match the text`)
    return { joined, offsets }
  }
  const keys = head.keys
  const counts = uints('postingCounts', keys.length)
  const all = uints('postings')
  yield
  const postings = yield* PostingLists.inSteps(keys, counts, all)
  if (postings.total !== all.length) fail('its posting counts do not add up to its postings')
  yield
  const hashes = decoded('hashes', 'hashOffsets')
  yield
  const slugs = decoded('slugs', 'slugOffsets')
  yield
  const ids = decoded('ids', 'idOffsets')
  yield
  const derived = DERIVED_SECTIONS.every((name) => head.sections?.[name] !== undefined)
    ? {
        salaryRank: uints('salaryRank', n),
        bySalary: {
          postedAt: floats('bySalaryPostedAt'),
          expiresAt: floats('bySalaryExpiresAt'),
          salaryLow: floats('bySalarySalaryLow'),
          salaryHigh: floats('bySalarySalaryHigh'),
        },
        expiries: floats('expiries', null),
        lowestSalaries: floats('lowestSalaries'),
        slugSlots: int32s(uints('slugSlots', slugSlotCount(n) * 2)),
      }
    : undefined
  return {
    size: n,
    postedAt: floats('postedAt'),
    expiresAt: floats('expiresAt'),
    salaryLow: floats('salaryLow'),
    salaryHigh: floats('salaryHigh'),
    salaryOrder: uints('salaryOrder', n),
    salaryLowOrder: uints('salaryLowOrder', n),
    codes: Object.fromEntries(VALUE_FACETS.map((f) => [f, uints(f, n)])) as Record<ValueFacet, Uint32Array>,
    values: head.values,
    postings,
    hashes,
    slugs,
    ids,
    derived,
  }
}

/** The same bytes as int32s. */
function int32s(view: Uint32Array): Int32Array {
  return new Int32Array(view.buffer, view.byteOffset, view.length)
}

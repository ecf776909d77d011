/**
 * The in-memory query index for one snapshot: posting lists per facet value
 * and typed arrays for ranges, built once at load from index/jobs.json.
 * Positions are indexes into the date order (0 = newest).
 */
import type { IndexedJob, SnapshotJobIndex } from '../../core/snapshot.ts'

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

export class JobIndex implements RangeColumns {
  readonly size: number
  readonly jobs: IndexedJob[]
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
  /** Every finite expires_at, ascending, to count expired jobs in O(log n). */
  private readonly expiries: Float64Array
  private readonly postings = new Map<string, Uint32Array>()
  private readonly positionBySlug = new Map<string, number>()

  constructor(index: SnapshotJobIndex) {
    const n = index.jobs.length
    this.size = n
    this.jobs = index.jobs
    this.postedAt = new Float64Array(n)
    this.expiresAt = new Float64Array(n)
    this.salaryLow = new Float64Array(n)
    this.salaryHigh = new Float64Array(n)
    this.salaryOrder = Uint32Array.from(index.salary_order)
    // salary_order must be a permutation of the positions: queries walk it and sort by its inverse.
    if (this.salaryOrder.length !== n) throw new Error(`index: salary_order has ${this.salaryOrder.length} positions, there are ${n} jobs`)
    this.salaryRank = new Uint32Array(n).fill(n)
    for (let rank = 0; rank < n; rank++) {
      const p = this.salaryOrder[rank]!
      if (p >= n || this.salaryRank[p] !== n) throw new Error(`index: salary_order repeats or exceeds position ${p}`)
      this.salaryRank[p] = rank
    }
    // Per facet, value -> positions. Values are lowercased once per distinct value, not once per job.
    const lists = new Map<Facet, Map<string, number[]>>()
    const listFor = (facet: Facet, value: string): number[] => {
      let byValue = lists.get(facet)
      if (!byValue) lists.set(facet, (byValue = new Map()))
      let list = byValue.get(value)
      if (!list) byValue.set(value, (list = []))
      return list
    }
    const add = (facet: Facet, value: string | undefined, position: number) => {
      if (value === undefined) return
      const list = listFor(facet, value)
      if (list.length === 0 || list[list.length - 1] !== position) list.push(position)
    }
    let firstExpiry = Infinity
    for (let p = 0; p < n; p++) {
      const job = index.jobs[p]!
      this.positionBySlug.set(job.slug, p)
      this.postedAt[p] = job.posted_at
      const expires = job.expires_at ?? Infinity
      this.expiresAt[p] = expires
      if (expires < firstExpiry) firstExpiry = expires
      this.salaryLow[p] = job.salary_low ?? NaN
      this.salaryHigh[p] = job.salary_high ?? NaN
      add('category', job.category, p)
      add('level', job.level, p)
      add('schedule', job.schedule, p)
      add('work_arrangement', job.work_arrangement, p)
      add('company', job.company_id, p)
      for (const tag of job.tags) add('tag', tag, p)
      for (const place of job.places) add('place', place, p)
    }
    for (const [facet, byValue] of lists) {
      for (const [value, list] of byValue) {
        const key = `${facet}:${value.toLowerCase()}`
        const existing = this.postings.get(key)
        // Two spellings of one value (case only) share a key: merge, keeping positions ascending.
        this.postings.set(key, existing ? Uint32Array.from(new Set([...existing, ...list])).sort() : Uint32Array.from(list))
      }
    }
    this.byDate = { postedAt: this.postedAt, expiresAt: this.expiresAt, salaryLow: this.salaryLow, salaryHigh: this.salaryHigh }
    const inSalaryOrder = (column: Float64Array) => Float64Array.from(this.salaryOrder, (p) => column[p]!)
    this.bySalary = {
      postedAt: inSalaryOrder(this.postedAt),
      expiresAt: inSalaryOrder(this.expiresAt),
      salaryLow: inSalaryOrder(this.salaryLow),
      salaryHigh: inSalaryOrder(this.salaryHigh),
    }
    this.firstExpiry = firstExpiry
    this.expiries = this.expiresAt.filter((t) => Number.isFinite(t)).sort()
  }

  /** Positions holding `value` for `facet` (case-insensitive), ascending. */
  postingsFor(facet: Facet, value: string): Uint32Array | undefined {
    return this.postings.get(`${facet}:${value.toLowerCase()}`)
  }

  positionOf(slug: string): number | undefined {
    return this.positionBySlug.get(slug)
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

  isExpired(position: number, now: number): boolean {
    return this.expiresAt[position]! <= now
  }
}

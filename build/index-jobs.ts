/**
 * What the runtime needs to filter, sort and search without re-reading the
 * dataset: one compact IndexedJob per live job, the salary order, and the
 * search postings.
 */
import { endianness } from 'node:os'
import { resolveContinent, resolveCountry, resolveRegion } from '../core/geo.ts'
import { orderByKey } from '../core/index-derivations.ts'
import { annualUsd } from '../core/salary.ts'
import type { DatasetCompany, DatasetJob, ExchangeRates } from '../core/schema/dataset.ts'
import type { V2Job } from '../core/schema/api.ts'
import type { SearchDocument, SerializedTerms } from '../core/search.ts'
import { placeKey, type IndexedJob } from '../core/snapshot.ts'

/**
 * Location keys a job answers to: its office countries (as countries, and
 * as offices for office_country), and what its remote_allowed entries name
 * (a country, else a continent, else a region). The runtime expands a
 * queried country into the keys that contain it.
 */
function placeKeysForJob(job: Pick<DatasetJob, 'office_locations' | 'remote_allowed'>): string[] {
  const keys = new Set<string>()
  for (const office of job.office_locations ?? []) {
    const country = office.country ? resolveCountry(office.country) : undefined
    if (country) keys.add(placeKey.country(country)).add(placeKey.office(country))
  }
  for (const place of job.remote_allowed ?? []) {
    const country = place.country ? resolveCountry(place.country) : undefined
    const continent = place.continent ? resolveContinent(place.continent) : undefined
    const region = place.region ? resolveRegion(place.region) : undefined
    if (country) keys.add(placeKey.country(country))
    else if (continent) keys.add(placeKey.continent(continent))
    else if (region) keys.add(placeKey.region(region))
  }
  return [...keys].sort()
}

export function indexJob(job: DatasetJob, rates: ExchangeRates, hash: string): IndexedJob {
  const salary = annualUsd(job, rates)
  const tags = new Set([...(job.skills ?? []), ...(job.stack ?? []), ...(job.tools ?? [])].map((t) => t.slug))
  const indexed: IndexedJob = {
    id: job.id,
    slug: job.slug,
    company_id: job.company_id,
    posted_at: Date.parse(job.posted_at),
    work_arrangement: job.work_arrangement,
    tags: [...tags],
    places: placeKeysForJob(job),
    hash,
  }
  if (job.expires_at) indexed.expires_at = Date.parse(job.expires_at)
  if (job.category) indexed.category = job.category
  if (job.level) indexed.level = job.level
  if (job.schedule_type) indexed.schedule = job.schedule_type
  if (salary) {
    indexed.salary_low = salary.low
    indexed.salary_high = salary.high
  }
  return indexed
}

/**
 * Positions into the date-ordered jobs, given each one's annualised top of
 * range: highest salary first, no salary last, ties newest first (lower position).
 */
export function salaryOrder(salaryHigh: ArrayLike<number | undefined>): Uint32Array {
  const keys = new Float64Array(salaryHigh.length)
  for (let p = 0; p < keys.length; p++) keys[p] = salaryHigh[p] ?? NaN
  return orderByKey(keys, true)
}

export function searchDocument(v2: V2Job, company: DatasetCompany): SearchDocument {
  const places = [...(v2.office_locations ?? []), ...(v2.remote_allowed ?? [])]
    .flatMap((l) => [l.city, l.state, l.country, l.continent, l.region])
    .filter(Boolean)
  const tags = [...(v2.skills ?? []), ...(v2.stack ?? []), ...(v2.tools ?? [])].map((t) => t.name)
  return {
    title: v2.title,
    role: v2.role ?? '',
    company: company.name,
    tags: [...new Set(tags)].join(' '),
    places: [...new Set(places)].join(' '),
    description: v2.description ?? '',
  }
}

/**
 * Collects term -> positions while jobs are added in date order, so every
 * list comes out ascending. An incremental build first carries forward the
 * previous snapshot's lists for the jobs it republishes unchanged (their
 * terms are the same), and adds only the others.
 */
export class TermPostingsBuilder {
  /** Per term, its positions so far in a typed array that doubles as it fills (1M jobs hold ~50M postings). */
  private readonly postings = new Map<string, { positions: Uint32Array; count: number }>()
  /** Per term, the carried-forward positions (ascending), merged with the added ones when serialized. */
  private readonly carried = new Map<string, Uint32Array>()

  /**
   * Seeds the lists from the previous snapshot's (`previousTerms`, `previousPostings`, as
   * serialize wrote them): `newPosition[old]` is where the job at the previous snapshot's
   * position `old` sits in this one, or -1 (or past its end) when it is not carried (gone,
   * or changed and added again). Carried jobs keep their relative order, so each list stays ascending;
   * they must not also be added.
   */
  carryForward(previousTerms: SerializedTerms, previousPostings: Uint32Array, newPosition: Int32Array): void {
    let offset = 0
    for (const [i, term] of previousTerms.terms.entries()) {
      const count = previousTerms.counts[i]!
      const kept = new Uint32Array(count)
      let keptCount = 0
      for (let k = offset; k < offset + count; k++) {
        const position = newPosition[previousPostings[k]!] ?? -1
        if (position >= 0) kept[keptCount++] = position
      }
      offset += count
      if (keptCount > 0) this.carried.set(term, kept.subarray(0, keptCount))
    }
  }

  add(position: number, terms: Iterable<string>): void {
    for (const term of terms) {
      const list = this.postings.get(term)
      if (!list) {
        const positions = new Uint32Array(4)
        positions[0] = position
        this.postings.set(term, { positions, count: 1 })
        continue
      }
      if (list.count === list.positions.length) {
        const grown = new Uint32Array(list.positions.length * 2)
        grown.set(list.positions)
        list.positions = grown
      }
      list.positions[list.count++] = position
    }
  }

  /** The vocabulary (sorted) with counts, and the concatenated postings as little-endian uint32; once (it empties the lists). */
  serialize(): { terms: SerializedTerms; postings: Buffer } {
    const terms = [...new Set([...this.postings.keys(), ...this.carried.keys()])].sort()
    const added = (term: string) => this.postings.get(term) ?? { positions: NO_POSITIONS, count: 0 }
    const counts = terms.map((term) => added(term).count + (this.carried.get(term)?.length ?? 0))
    // Filled as uint32 in the machine's order, swapped to little-endian after where that is not it: writing
    // each of ~46M postings at 1M jobs through Buffer.writeUInt32LE was a second of the build's own thread.
    const all = new Uint32Array(counts.reduce((sum, n) => sum + n, 0))
    let offset = 0
    for (const term of terms) {
      const { positions, count } = added(term)
      const carried = this.carried.get(term) ?? NO_POSITIONS
      // Both ascending, no position in both: a merge, into a typed array (no call per posting).
      let c = 0
      for (let a = 0; a < count; a++) {
        const position = positions[a]!
        while (c < carried.length && carried[c]! < position) all[offset++] = carried[c++]!
        all[offset++] = position
      }
      all.set(carried.subarray(c), offset)
      offset += carried.length - c
      // Each list dropped once copied: at 1M jobs they hold as much as the buffer, which would otherwise double.
      this.postings.delete(term)
      this.carried.delete(term)
    }
    const buffer = Buffer.from(all.buffer, all.byteOffset, all.byteLength)
    if (endianness() !== 'LE') buffer.swap32()
    return { terms: { terms, counts }, postings: buffer }
  }
}

const NO_POSITIONS = new Uint32Array(0)

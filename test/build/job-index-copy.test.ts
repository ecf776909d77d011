/**
 * A rebuild copies its reused jobs' records of index/jobs.bin from the
 * previous snapshot's file instead of parsing their index/jobs.json entries:
 * the file it writes must be the one the entries would give, byte for byte,
 * whatever moved, left, arrived or first brought a value (spelt in any case).
 */
import { describe, expect, it } from 'vitest'
import { type IndexedJob, JobIndexFileWriter, PreviousJobIndex, readJobIndexFile } from '../../core/index.ts'

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const TAGS = ['go', 'Go', 'rust', 'Rust', 'sql', 'k8s', 'aws', 'gcp', 'élan', 'Élan', 'figma', 'miro', 'react', 'vue']
const PLACES = ['c:DE', 'o:DE', 'c:FR', 'C:fr', 'r:EU', 'w', 'c:BR', 'o:BR']
const SCHEDULES = ['full_time', 'Full_Time', 'part_time', '4_day_week', undefined]
const CATEGORIES = ['engineering', 'Engineering', 'design', 'marketing', undefined]
const LEVELS = ['mid', 'senior', 'Senior', undefined]

function jobMaker(next: () => number) {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!
  const some = (values: readonly string[]) =>
    Array.from({ length: Math.floor(next() * 5) }, () => pick(values)).filter((v, i, all) => all.indexOf(v) === i)
  let serial = 0
  return (): IndexedJob => {
    const n = serial++
    const salary = next() < 0.7 ? Math.round(next() * 200_000) : undefined
    const job: IndexedJob = {
      id: `id-${n}`,
      slug: `job-${n}${next() < 0.1 ? '-ünï' : ''}`,
      company_id: `company-${Math.floor(next() * 20)}`,
      posted_at: 1_790_000_000_000 - n * 1000,
      work_arrangement: pick(['onsite', 'hybrid', 'remote']),
      tags: some(TAGS),
      places: some(PLACES),
      hash: `hash-${n}`,
    }
    if (next() < 0.5) job.expires_at = 1_800_000_000_000 + n
    const category = pick(CATEGORIES)
    if (category !== undefined) job.category = category
    const level = pick(LEVELS)
    if (level !== undefined) job.level = level
    const schedule = pick(SCHEDULES)
    if (schedule !== undefined) job.schedule = schedule
    if (salary !== undefined) {
      job.salary_low = salary
      job.salary_high = salary + 1000
    }
    return job
  }
}

const bytesOf = (writer: JobIndexFileWriter, size: number) =>
  Buffer.concat(writer.finish(Array.from({ length: size }, (_, i) => i)))

/**
 * The posting lists the jobs give, made the plain way: `facet:lowercased value` -> the ascending positions of
 * the jobs with that value in any spelling, keyed in the order each facet, then each spelling, first appeared.
 */
function plainPostings(jobs: readonly IndexedJob[]): [string, number[]][] {
  const spellings = new Map<string, string[]>()
  const positions = new Map<string, Set<number>>()
  jobs.forEach((job, p) => {
    const values: [string, string | undefined][] = [
      ['category', job.category],
      ['level', job.level],
      ['schedule', job.schedule],
      ['work_arrangement', job.work_arrangement],
      ['company', job.company_id],
      ...job.tags.map((tag): [string, string] => ['tag', tag]),
      ...job.places.map((place): [string, string] => ['place', place]),
    ]
    for (const [facet, value] of values) {
      if (value === undefined) continue
      const seen = spellings.get(facet) ?? spellings.set(facet, []).get(facet)!
      if (!seen.includes(value)) seen.push(value)
      const key = `${facet}:${value.toLowerCase()}`
      ;(positions.get(key) ?? positions.set(key, new Set()).get(key)!).add(p)
    }
  })
  const keys = [
    ...new Set([...spellings].flatMap(([facet, values]) => values.map((v) => `${facet}:${v.toLowerCase()}`))),
  ]
  return keys.map((key) => [key, [...positions.get(key)!].sort((a, b) => a - b)])
}

describe('index/jobs.bin copied forward', () => {
  it('is the file the jobs entries give, after jobs moved, left and arrived', () => {
    let parsed = 0
    let copied = 0
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed)
      const makeJob = jobMaker(next)
      const old = Array.from({ length: 5 + Math.floor(next() * 120) }, makeJob)
      const previousWriter = new JobIndexFileWriter(old.length)
      for (const job of old) previousWriter.add(job)
      const previous = new PreviousJobIndex(readJobIndexFile(bytesOf(previousWriter, old.length), 'previous'))

      // The new order: most jobs kept (a few moved), some dropped, new ones anywhere, often at the top.
      const entries: { job: IndexedJob; from?: number }[] = []
      for (const [q, job] of old.entries()) {
        while (next() < 0.15) entries.push({ job: makeJob() })
        if (next() < 0.1) continue
        entries.push({ job, from: q })
      }
      for (let i = 0; i < entries.length / 10; i++) {
        const [moved] = entries.splice(Math.floor(next() * entries.length), 1)
        entries.splice(Math.floor(next() * entries.length), 0, moved!)
      }

      const expected = new JobIndexFileWriter(entries.length)
      for (const { job } of entries) expected.add(job)
      const actual = new JobIndexFileWriter(entries.length)
      for (const { job, from } of entries) {
        if (from === undefined) actual.add(job)
        else {
          copied++
          actual.addPrevious(previous, from, () => {
            parsed++
            return job
          })
        }
      }
      const expectedBytes = bytesOf(expected, entries.length)
      expect(bytesOf(actual, entries.length).equals(expectedBytes), `seed ${seed}`).toBe(true)
      const lists = [...readJobIndexFile(expectedBytes, 'expected').postings].map(([key, list]) => [key, [...list]])
      expect(lists, `seed ${seed}`).toEqual(plainPostings(entries.map(({ job }) => job)))
    }
    // Both ways were taken: copied, and parsed where two values first appeared at one job.
    expect(parsed).toBeGreaterThan(0)
    expect(parsed).toBeLessThan(copied / 2)
  })
})

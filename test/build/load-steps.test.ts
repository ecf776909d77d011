/**
 * What a hot swap's load builds in steps (requests running between them)
 * is what one stretch builds: the packed bodies' offsets past one step's
 * worth of jobs, the posting lists' lookup past one step's worth of keys, and
 * a company table past one step's worth of companies.
 * Small fixtures never reach a second step, so these make enough.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PackedBodies, PostingLists } from '../../core/index.ts'
import { CompanyTable } from '../../runtime/index.ts'
import { tempDir } from '../support/fixtures.ts'

/** Runs steps to the end, counting the pauses between them. */
function stepsOf<T>(steps: Generator<void, T, void>): { value: T; pauses: number } {
  let pauses = 0
  for (;;) {
    const next = steps.next()
    if (next.done) return { value: next.value, pauses }
    pauses++
  }
}

describe('loading in steps', () => {
  it('opens packed bodies past one step of offsets: every body where it is, a wrong length refused', async () => {
    const count = 600_000 // a little over two steps of 2^18
    const bodyOf = (i: number) => String(i % 1000)
    const lengths = Uint32Array.from({ length: count }, (_, i) => bodyOf(i).length)
    const file = path.join(await tempDir('load-steps'), 'bodies.bin')
    await writeFile(file, Array.from({ length: count }, (_, i) => bodyOf(i)).join(','))
    const { value: packed, pauses } = stepsOf(PackedBodies.inFileSteps(file, lengths, file))
    try {
      expect(pauses).toBeGreaterThanOrEqual(2)
      expect(packed.size).toBe(count)
      for (const i of [0, 1, 2 ** 18 - 1, 2 ** 18, 2 ** 18 + 1, 2 ** 19, count - 2, count - 1])
        expect(packed.body(i).toString(), `body ${i}`).toBe(bodyOf(i))
      expect(packed.range(2 ** 18 - 1, 2 ** 18 + 2).toString()).toBe(
        [2 ** 18 - 1, 2 ** 18, 2 ** 18 + 1].map(bodyOf).join(','),
      )
    } finally {
      packed.close()
    }
    const wrong = Uint32Array.from(lengths)
    wrong[count - 1]! += 1
    expect(() => stepsOf(PackedBodies.inFileSteps(file, wrong, file))).toThrow(/lengths add up to/)
  })

  it('looks up posting lists past one step of keys: each key its own positions', () => {
    const count = 40_000 // a little over two steps of 16,384
    const keys = Array.from({ length: count }, (_, k) => `company:${k}`)
    const counts = Uint32Array.from({ length: count }, (_, k) => k % 3)
    const all = new Uint32Array(counts.reduce((sum, n) => sum + n, 0))
    for (let k = 0, at = 0; k < count; k++) for (let i = 0; i < counts[k]!; i++) all[at++] = k * 10 + i
    const { value: lists, pauses } = stepsOf(PostingLists.inSteps(keys, counts, all))
    expect(pauses).toBeGreaterThanOrEqual(2)
    expect(lists.total).toBe(all.length)
    for (const k of [0, 1, 2, 16_383, 16_384, 16_385, 32_768, count - 1])
      expect([...lists.get(`company:${k}`)!], `key ${k}`).toEqual(Array.from({ length: k % 3 }, (_, i) => k * 10 + i))
    expect(lists.get(`company:${count}`)).toBeUndefined()
  })

  it('indexes a company table past one step of companies: each found by id and by slug', () => {
    const count = 25_000
    const companies = Array.from({ length: count }, (_, i) => ({
      id: `co_${i}`,
      slug: `company-${i}`,
      name: `Company ${i}`,
    }))
    const table = CompanyTable.fromCompanies(companies as unknown as Parameters<typeof CompanyTable.fromCompanies>[0])
    expect(table.size).toBe(count)
    for (const i of [0, 9_999, 10_000, 10_001, 20_000, count - 1]) {
      expect(table.indexOfId(`co_${i}`), `id of ${i}`).toBe(i)
      expect(table.indexOfSlug(`company-${i}`), `slug of ${i}`).toBe(i)
      expect(table.company(i).name).toBe(`Company ${i}`)
    }
    expect(table.indexOfId(`co_${count}`)).toBeUndefined()
  })
})

/**
 * The slug lookup every single job and MCP get_job goes through: slugs packed
 * into one string with an open-addressing table, instead of a Map of a
 * million strings. Checked against a Map on many slugs (so probes collide),
 * near misses and repeats; and over the ASCII bytes of index/jobs.bin, as a
 * server holds them (no string per slug, nor one for them all).
 */
import { describe, expect, it } from 'vitest'
import { packedJoined } from '../../core/index.ts'
import { SlugTable } from '../../runtime/index.ts'

function randomSlugs(count: number, seed: number): string[] {
  let state = seed
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    return state
  }
  const words = ['senior', 'engineer', 'data', 'acme', 'product', 'lead', 'design', 'ops', 'sales', 'café']
  return Array.from({ length: count }, (_, i) => {
    const parts = Array.from({ length: 1 + (next() % 4) }, () => words[next() % words.length])
    return `${parts.join('-')}-${i.toString(36)}`
  })
}

describe('SlugTable', () => {
  const slugs = randomSlugs(20_000, 7)
  const table = new SlugTable(slugs)

  it('made in steps (as a hot swap makes it), finds what the whole build finds, repeats included', () => {
    const withRepeats = [...slugs.slice(0, 500), ...slugs.slice(100, 200)]
    const offsets = new Uint32Array(withRepeats.length + 1)
    for (let p = 0; p < withRepeats.length; p++) offsets[p + 1] = offsets[p]! + withRepeats[p]!.length
    const packed = { joined: withRepeats.join(''), offsets }
    const steps = SlugTable.inSteps(packed, 7)
    let made: SlugTable | undefined
    let count = 0
    for (let next = steps.next(); ; next = steps.next(), count++)
      if (next.done) {
        made = next.value
        break
      }
    expect(count).toBe(Math.ceil(withRepeats.length / 7))
    const whole = new SlugTable(withRepeats)
    const map = new Map(withRepeats.map((slug, position) => [slug, position]))
    for (const slug of [...map.keys(), 'nope', '']) {
      expect(made.positionOf(slug), slug).toBe(map.get(slug))
      expect(whole.positionOf(slug), slug).toBe(map.get(slug))
    }
  })

  it('finds every slug at its position, as a Map would', () => {
    const map = new Map(slugs.map((slug, position) => [slug, position]))
    for (const [slug, position] of map) expect(table.positionOf(slug)).toBe(position)
    expect(table.size).toBe(slugs.length)
    for (let p = 0; p < slugs.length; p += 997) expect(table.at(p)).toBe(slugs[p])
  })

  it('answers near misses as a Map does: prefixes, extensions, one letter changed, other case, empty', () => {
    const map = new Map(slugs.map((slug, position) => [slug, position]))
    let missing = 0
    for (const slug of slugs.slice(0, 2000)) {
      for (const near of [slug.slice(0, -1), `${slug}x`, `${slug.slice(0, -1)}~`, slug.toUpperCase()]) {
        expect(table.positionOf(near), near).toBe(map.get(near))
        if (!map.has(near)) missing++
      }
    }
    expect(missing).toBeGreaterThan(6000)
    expect(table.positionOf('')).toBeUndefined()
    expect(new SlugTable([]).positionOf('anything')).toBeUndefined()
  })

  it('names the later position of a slug given twice', () => {
    const repeated = new SlugTable(['a', 'b', 'a', 'c'])
    expect(repeated.positionOf('a')).toBe(2)
    expect(repeated.positionOf('b')).toBe(1)
    expect(repeated.positionOf('c')).toBe(3)
  })

  it('over ASCII bytes (as index/jobs.bin is held) finds what a Map finds; other text stays a string', () => {
    const ascii = slugs.filter((slug) => !slug.includes('é')).slice(0, 3000)
    const offsets = new Uint32Array(ascii.length + 1)
    for (let p = 0; p < ascii.length; p++) offsets[p + 1] = offsets[p]! + ascii[p]!.length
    const bytes = Buffer.from(`head${ascii.join('')}`)
    const joined = packedJoined(bytes, 4, bytes.length)
    expect(Buffer.isBuffer(joined)).toBe(true)
    const steps = SlugTable.inSteps({ joined, offsets })
    let next = steps.next()
    while (!next.done) next = steps.next()
    const fromBytes = next.value
    const map = new Map(ascii.map((slug, position) => [slug, position]))
    for (const [slug, position] of map) {
      expect(fromBytes.positionOf(slug), slug).toBe(position)
      expect(fromBytes.at(position)).toBe(slug)
    }
    // Near misses, a non-ASCII slug whose bytes would read as another slug's latin1, and the empty slug.
    const first = ascii[0]!
    for (const near of [first.slice(0, -1), `${first}x`, first.toUpperCase(), `${first.slice(0, -1)}\u0100`, ''])
      expect(fromBytes.positionOf(near), near).toBe(map.get(near))
    const accented = Buffer.from('café-1')
    expect(packedJoined(accented, 0, accented.length)).toBe('café-1')
  })
})

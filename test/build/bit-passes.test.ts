/**
 * The WebAssembly passes over bitsets (runtime/query/bit-passes.wat, run by
 * runtime/query/bit-arena.ts): the committed module is what the .wat
 * compiles to, each pass agrees with the same loop in plain JavaScript on
 * any word count (a SIMD body and a 0-3 word tail) and leaves every word past
 * `words` as it was, and bitsets handed out before the memory grows keep
 * their bits. The engine's own answers over these passes are judged against
 * a brute-force oracle in test/rest/filters.test.ts and v2-filters.test.ts.
 */
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BitArena, BitsetCache } from '../../runtime/index.ts'
import { generatedBitPasses, generatedPath } from '../../support/bit-passes-wasm.ts'

function popcount(word: number): number {
  let count = 0
  for (let w = word >>> 0; w !== 0; w &= w - 1) count++
  return count
}

function countOf(bits: ArrayLike<number>, words: number): number {
  let count = 0
  for (let w = 0; w < words; w++) count += popcount(bits[w]!)
  return count
}

/** Three bitsets of one arena filled with `a`, `b`, `out`'s words, and plain copies to compute the expected answer on. */
function operands(size: number, a: number[], b: number[], out: number[]) {
  const arena = new BitArena(size)
  const [bitsA, bitsB, bitsOut] = [arena.allocate(), arena.allocate(), arena.allocate()]
  bitsA.set(a)
  bitsB.set(b)
  bitsOut.set(out)
  return { arena, bitsA, bitsB, bitsOut, before: Uint32Array.from(out) }
}

/** A bitset size, its word count, and how many of its words a pass is asked to cover. */
const shape = fc.integer({ min: 1, max: 40 * 32 }).chain((size) => {
  const words = (size + 31) >>> 5
  const word = fc.integer({ min: 0, max: 0xffffffff })
  const wordsOf = fc.array(word, { minLength: words, maxLength: words })
  return fc.record({
    size: fc.constant(size),
    covered: fc.integer({ min: 0, max: words }),
    a: wordsOf,
    b: wordsOf,
    out: wordsOf,
  })
})

describe('bit passes in WebAssembly', () => {
  it('the committed module is what bit-passes.wat compiles to (`npm run wasm` writes it)', async () => {
    expect(readFileSync(generatedPath, 'utf8')).toBe(await generatedBitPasses())
  })

  it('and, andCount, or and andOr write what the JavaScript loop writes, and nothing past `words`', () => {
    fc.assert(
      fc.property(shape, ({ size, covered, a, b, out }) => {
        const expectAfter = (actual: Uint32Array, word: (w: number) => number) => {
          const expected = out.map((value, w) => (w < covered ? word(w) >>> 0 : value >>> 0))
          expect([...actual]).toEqual(expected)
        }
        {
          const { arena, bitsA, bitsOut, before } = operands(size, a, b, out)
          arena.and(bitsOut, bitsA, covered)
          expectAfter(bitsOut, (w) => before[w]! & a[w]!)
        }
        {
          const { arena, bitsA, bitsOut, before } = operands(size, a, b, out)
          const count = arena.andCount(bitsOut, bitsA, covered)
          expectAfter(bitsOut, (w) => before[w]! & a[w]!)
          expect(count).toBe(countOf(bitsOut, covered))
        }
        {
          const { arena, bitsA, bitsB, bitsOut } = operands(size, a, b, out)
          arena.or(bitsOut, bitsA, bitsB, covered)
          expectAfter(bitsOut, (w) => a[w]! | b[w]!)
        }
        {
          const { arena, bitsA, bitsB, bitsOut, before } = operands(size, a, b, out)
          arena.andOr(bitsOut, bitsA, bitsB, covered)
          expectAfter(bitsOut, (w) => before[w]! & (a[w]! | b[w]!))
        }
      }),
      { numRuns: 300 },
    )
  })

  it('countAnd and count read both operands and write neither', () => {
    fc.assert(
      fc.property(shape, ({ size, covered, a, b, out }) => {
        const { arena, bitsA, bitsB } = operands(size, a, b, out)
        const both = a.map((value, w) => value & b[w]!)
        expect(arena.countAnd(bitsA, bitsB, covered)).toBe(countOf(both, covered))
        expect(arena.count(bitsA, covered)).toBe(countOf(a, covered))
        expect([...bitsA]).toEqual(a.map((value) => value >>> 0))
        expect([...bitsB]).toEqual(b.map((value) => value >>> 0))
      }),
      { numRuns: 300 },
    )
  })

  it('or may write over one of its operands (out = a | out)', () => {
    const arena = new BitArena(200)
    const a = arena.allocate()
    const out = arena.allocate()
    a.set([0b1010, 0, 0xffff0000, 1, 2, 3, 4])
    out.set([0b0101, 7, 0x0000ffff, 0, 0, 0, 0])
    arena.or(out, a, out, out.length)
    expect([...out]).toEqual([0b1111, 7, 0xffffffff, 1, 2, 3, 4])
  })

  it('a bitset handed out before the memory grows keeps its bits and its passes', () => {
    // 1M positions: 125 KB a bitset, so a few dozen take the memory through several grows.
    const arena = new BitArena(1_000_000)
    const first = arena.allocate()
    for (let p = 0; p < arena.size; p += 7) first[p >>> 5]! |= 1 << (p & 31)
    const expected = countOf(first, arena.words)
    const later = Array.from({ length: 40 }, () => arena.allocate())
    expect(arena.bytes).toBeGreaterThanOrEqual(41 * arena.words * 4)
    expect(
      later.every((bits) => countOf(bits, bits.length) === 0),
      'each new bitset starts zeroed',
    ).toBe(true)
    expect(first.length).toBe(arena.words)
    expect(arena.count(first, arena.words)).toBe(expected)
    const last = later.at(-1)!
    last.fill(0xffffffff)
    expect(arena.andCount(last, first, arena.words)).toBe(expected)
  })

  it('a retired list gives its bitset to another list only once the query that may hold it returned its scratch', () => {
    const cache = new BitsetCache(64)
    const long = Uint32Array.from({ length: 40 }, (_, i) => i)
    const other = Uint32Array.from({ length: 30 }, (_, i) => 63 - i)
    const held = cache.bitsOf(long)!
    const snapshot = Uint32Array.from(held)
    cache.retire(long)
    // Still inside the query that holds `held`: another list gets a bitset of its own.
    const otherBits = cache.bitsOf(other)!
    expect(otherBits).not.toBe(held)
    expect([...held]).toEqual([...snapshot])
    cache.returnScratch()
    const third = Uint32Array.from({ length: 20 }, (_, i) => i * 3)
    expect(cache.bitsOf(third), 'after the query: the retired bitset is reused').toBe(held)
    expect(cache.arena.count(held, held.length)).toBe(20)
    expect(cache.bitsOf(long), 'a retired list never gets a bitset again').toBeUndefined()
  })
})

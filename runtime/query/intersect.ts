/**
 * The one intersection behind filters and `q`, on bitsets (one bit per
 * position, 32 to a word). Each step is a union of posting lists (a filter
 * group's values, or a query term's expansions); a position matches when it
 * is in every step. A long posting list (a broad value: a work arrangement,
 * a region, a common word) is turned into a bitset once and kept, so its
 * union or intersection costs size/32 word operations instead of a walk of
 * its positions; a short one sets its bits directly. Every bitset lives in
 * the index's BitArena, whose passes over whole bitsets run as WebAssembly
 * SIMD; reading matches bit by bit stays here.
 */
import { BitArena } from './bit-arena.ts'

/** A list at least this fraction of the positions long is worth a kept bitset (it then takes no more memory than the list). */
const BITSET_SHARE = 1 / 32

/**
 * Bitsets of long posting lists, made on first use and kept with the index
 * they belong to; and scratch bitsets lent to one query at a time (a query
 * runs synchronously), so queries allocate no memory for their bitsets:
 * allocating ArrayBuffers at every request made V8 run a full collection
 * about every 700 ms under load. Both come from one arena (bit-arena.ts),
 * which never frees: every scratch bitset is taken back and lent again.
 */
export class BitsetCache {
  // A Map, not a WeakMap: its keys are the index's own lists, alive as long as it is, and V8 marks
  // a large WeakMap's entries as ephemerons, which lengthened full collections.
  private readonly cache = new Map<Uint32Array, Uint32Array>()
  private readonly spare: Uint32Array[] = []
  private readonly lent: Uint32Array[] = []
  /** Kept bitsets whose lists were retired: the arena never frees, so the next list to keep one takes it. */
  private readonly freed: Uint32Array[] = []
  /**
   * Bitsets retired while a query may still hold them (a list read from a file
   * can push an earlier one of the same query out of its cache): free only
   * once that query has returned its scratch.
   */
  private readonly retiring: Uint32Array[] = []
  /** Lists whose holder let them go (a posting list read from a file, out of its cache): never kept again. */
  private readonly retired = new WeakSet<Uint32Array>()

  /** Where this index's bitsets live, and the passes over them. */
  readonly arena: BitArena

  constructor(readonly size: number) {
    this.arena = new BitArena(size)
  }

  /** A zeroed bitset for the running query (`zeroed` false: any content, the caller overwrites it); valid until `returnScratch`. */
  scratch(zeroed = true): Uint32Array {
    const spare = this.spare.pop()
    const bits = spare ? (zeroed ? spare.fill(0) : spare) : this.arena.allocate()
    this.lent.push(bits)
    return bits
  }

  /** Takes back one scratch bitset before the query ends (its last reader is done with it). */
  release(bits: Uint32Array): void {
    const at = this.lent.lastIndexOf(bits)
    if (at < 0) return
    this.lent.splice(at, 1)
    this.spare.push(bits)
  }

  /** A bitset kept as long as the index is (the caller owns its content). */
  keep(): Uint32Array {
    return this.arena.allocate()
  }

  private ranks: Uint32Array | undefined

  /** One number per position, reused by every query (the salary page's ranks): valid until the next call. */
  rankBuffer(): Uint32Array {
    this.ranks ??= new Uint32Array(this.size)
    return this.ranks
  }

  /** Takes back every scratch bitset lent since the last call: the query that used them has finished. */
  returnScratch(): void {
    for (const bits of this.lent) this.spare.push(bits)
    this.lent.length = 0
    for (const bits of this.retiring) this.freed.push(bits)
    this.retiring.length = 0
  }

  /**
   * Forgets the list's bitset, and keeps none for it again: its holder let it
   * go (a query that took it just before still reads it as a list).
   */
  retire(list: Uint32Array): void {
    const bits = this.cache.get(list)
    if (bits) this.retiring.push(bits)
    this.cache.delete(list)
    this.retired.add(list)
  }

  /** Whether a list this long gets a kept bitset (bitsOf), by the list's object. */
  keepsBitsFor(list: Uint32Array): boolean {
    return list.length >= this.size * BITSET_SHARE
  }

  /** The list's bitset when the list is long enough to be worth keeping one; undefined otherwise. */
  bitsOf(list: Uint32Array): Uint32Array | undefined {
    if (!this.keepsBitsFor(list) || this.retired.has(list)) return undefined
    let bits = this.cache.get(list)
    if (bits === undefined) {
      bits = this.freed.pop()?.fill(0) ?? this.arena.allocate()
      setBits(bits, list)
      this.cache.set(list, bits)
    }
    return bits
  }
}

const wordsFor = (size: number) => (size + 31) >>> 5

/** Sets the bits of an ascending list's positions below `below` (the rest of the list is not read). */
function setBits(bits: Uint32Array, list: Uint32Array, below = Infinity): void {
  for (let k = 0; k < list.length; k++) {
    const p = list[k]!
    if (p >= below) return
    bits[p >>> 5]! |= 1 << (p & 31)
  }
}

/** One step: a union of posting lists. */
export interface Step {
  lists: readonly Uint32Array[]
}

/** One step's lists split in two: the long ones as their kept bitsets, and the short ones. */
function splitStep(step: Step, cache: BitsetCache): { kept: Uint32Array[]; short: Uint32Array[] } {
  const kept: Uint32Array[] = []
  const short: Uint32Array[] = []
  for (const list of step.lists) {
    const bits = cache.bitsOf(list)
    if (bits) kept.push(bits)
    else short.push(list)
  }
  return { kept, short }
}

/** `bits`' first `words` words become the union of `kept`'s: a pass per list after the first two. */
function unionInto(bits: Uint32Array, kept: readonly Uint32Array[], words: number, arena: BitArena): void {
  if (kept.length === 1) {
    bits.set(kept[0]!.subarray(0, words))
    return
  }
  arena.or(bits, kept[0]!, kept[1]!, words)
  for (let j = 2; j < kept.length; j++) arena.or(bits, bits, kept[j]!, words)
}

/** `bits &= union(kept)` on the first `words` words: one pass for one or two lists, else through a union. */
function andUnionInto(bits: Uint32Array, kept: readonly Uint32Array[], words: number, cache: BitsetCache): void {
  const { arena } = cache
  if (kept.length === 1) arena.and(bits, kept[0]!, words)
  else if (kept.length === 2) arena.andOr(bits, kept[0]!, kept[1]!, words)
  else {
    const union = cache.scratch(false)
    unionInto(union, kept, words, arena)
    arena.and(bits, union, words)
    cache.release(union)
  }
}

/** Bits set in each 16-bit number (64 KB, made once). */
const POPCOUNT16 = new Uint8Array(1 << 16)
for (let i = 1; i < POPCOUNT16.length; i++) POPCOUNT16[i] = POPCOUNT16[i >>> 1]! + (i & 1)

/** Bits set in a 32-bit word: two table lookups, about twice as fast in V8 as the shift-and-add count (no popcnt). */
function popcount(word: number): number {
  return POPCOUNT16[word & 0xffff]! + POPCOUNT16[word >>> 16]!
}

/**
 * Intersects the steps (each a union of posting lists) into a new bitset
 * the caller may narrow further. Callers read matches in whatever order
 * they need by testing bits, so no list of matches is built or sorted.
 *
 * With `below` (posted_after keeps the positions below one), only the
 * words holding positions below it are computed, and the lists are read
 * only up to it (they ascend): the words after it are zero, the last word
 * may hold positions from `below` on (the caller clears them: clearFrom).
 */
export function matchEveryStep(steps: readonly Step[], cache: BitsetCache, below = cache.size): Uint32Array {
  if (steps.length === 0)
    throw new Error('matchEveryStep: no steps (nothing restricts; the caller decides what that means)')
  const words = wordsFor(below)
  // Smallest first: a step of short lists sets fewer bits.
  const ordered = [...steps].sort((a, b) => totalLength(a.lists) - totalLength(b.lists))
  const first = splitStep(ordered[0]!, cache)
  let bits: Uint32Array
  if (first.kept.length > 0) {
    // The union writes every word below `below`: only the rest is zeroed.
    bits = cache.scratch(false)
    unionInto(bits, first.kept, words, cache.arena)
    bits.fill(0, words)
  } else bits = cache.scratch()
  for (const list of first.short) setBits(bits, list, below)
  for (let s = 1; s < ordered.length; s++) {
    const { kept, short } = splitStep(ordered[s]!, cache)
    if (kept.length === 0) {
      // Short lists only: their positions are looked up in the matches so far, no pass over every word.
      const narrowed = cache.scratch()
      for (const list of short) keepListed(narrowed, bits, list, below)
      cache.release(bits)
      bits = narrowed
      continue
    }
    let union: Uint32Array | undefined
    if (short.length > 0) {
      union = cache.scratch()
      for (const list of short) setBits(union, list, below)
      kept.push(union)
    }
    andUnionInto(bits, kept, words, cache)
    if (union) cache.release(union)
  }
  return bits
}

/** Sets in `out` the positions of an ascending `list` below `below` that are set in `bits`. */
function keepListed(out: Uint32Array, bits: Uint32Array, list: Uint32Array, below: number): void {
  for (let k = 0; k < list.length; k++) {
    const p = list[k]!
    if (p >= below) return
    const mask = 1 << (p & 31)
    if ((bits[p >>> 5]! & mask) !== 0) out[p >>> 5]! |= mask
  }
}

/**
 * `bits &= every one of also`, on the first `words` words, counting the bits
 * left: the count rides on the last AND's pass. Every bitset is the cache's.
 */
export function andAllCount(
  bits: Uint32Array,
  also: readonly Uint32Array[],
  words: number,
  cache: BitsetCache,
): number {
  const { arena } = cache
  if (also.length === 0) return arena.count(bits, words)
  for (let j = 0; j < also.length - 1; j++) arena.and(bits, also[j]!, words)
  return arena.andCount(bits, also[also.length - 1]!, words)
}

/** Sets the positions below `end` in `bits` (a zeroed bitset). */
export function setBelow(bits: Uint32Array, end: number): Uint32Array {
  bits.fill(0xffffffff, 0, end >>> 5)
  if (end & 31) bits[end >>> 5] = (1 << (end & 31)) - 1
  return bits
}

/** Clears every position from `from` on. */
export function clearFrom(bits: Uint32Array, from: number): void {
  const word = from >>> 5
  if (word >= bits.length) return
  bits[word]! &= (1 << (from & 31)) - 1
  bits.fill(0, word + 1)
}

/** Popcount of `a AND b` (their first `words` words), without writing either: both are the cache's. */
export function countBitsAnd(a: Uint32Array, b: Uint32Array, cache: BitsetCache, words = a.length): number {
  return cache.arena.countAnd(a, b, words)
}

/** ORs a posting list into `bits` (the cache's): through its kept bitset when it has one, else bit by bit. */
export function orInto(bits: Uint32Array, list: Uint32Array, cache: BitsetCache): void {
  const kept = cache.bitsOf(list)
  if (kept) cache.arena.or(bits, bits, kept, bits.length)
  else setBits(bits, list)
}

/** The bits set in the first `words` words of one of the cache's bitsets. */
export function countBits(bits: Uint32Array, cache: BitsetCache, words = bits.length): number {
  return cache.arena.count(bits, words)
}

/** Makes `bits` (zeroed) the positions below its size where `holds` is true. */
export function setWhere(bits: Uint32Array, size: number, holds: (position: number) => boolean): Uint32Array {
  for (let p = 0; p < size; p++) if (holds(p)) bits[p >>> 5]! |= 1 << (p & 31)
  return bits
}

function totalLength(lists: readonly Uint32Array[]): number {
  let n = 0
  for (const list of lists) n += list.length
  return n
}

/** True when position `p` is set. */
export function hasBit(bits: Uint32Array, p: number): boolean {
  return (bits[p >>> 5]! & (1 << (p & 31))) !== 0
}

/** The set positions in ascending order, from the `skip`-th to before the `end`-th (0-based), stopping there. */
export function setPositionsInRange(bits: Uint32Array, skip: number, end: number): number[] {
  const out: number[] = []
  let seen = 0
  for (let w = 0; w < bits.length && seen < end; w++) {
    let word = bits[w]!
    if (word === 0) continue
    const inWord = popcount(word)
    // A whole word before the page is skipped without visiting its bits.
    if (seen + inWord <= skip) {
      seen += inWord
      continue
    }
    while (word !== 0 && seen < end) {
      const bit = word & -word
      word ^= bit
      if (seen >= skip) out.push((w << 5) | (31 - Math.clz32(bit)))
      seen++
    }
  }
  return out
}

/** Up to `count` set positions from position `from` on, ascending (a cursor page: no popcount of what precedes). */
export function setPositionsFrom(bits: Uint32Array, from: number, count: number): number[] {
  const out: number[] = []
  const first = from >>> 5
  for (let w = first; w < bits.length && out.length < count; w++) {
    let word = bits[w]!
    // The first word loses the positions below `from`.
    if (w === first && (from & 31) !== 0) word &= ~((1 << (from & 31)) - 1)
    while (word !== 0 && out.length < count) {
      const bit = word & -word
      word ^= bit
      out.push((w << 5) | (31 - Math.clz32(bit)))
    }
  }
  return out
}

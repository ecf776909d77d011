/**
 * Full-text matching for `q`: every query term must match some vocabulary
 * term exactly, as a prefix (3+ characters), or, only when it matches none
 * of those, with one typo (5+ characters), through
 * MiniSearch's SearchableMap; the positions of the expansions are unioned per
 * query term and intersected across terms. Cost is bounded by the terms
 * (MAX_QUERY_TERMS), the expansions per term (MAX_TERM_EXPANSIONS) and the
 * posting lists they touch, never by scoring.
 *
 * The posting lists are one array in memory, or (large snapshots: 183 MB at
 * 1M jobs, in every worker) left in the file and read a list at a time by
 * position, through a cache bounded by bytes: the page cache then holds one
 * copy for every worker.
 */
import { distance } from 'fastest-levenshtein'
import { LRUCache } from 'lru-cache'
import SearchableMap from 'minisearch/SearchableMap'
import {
  FUZZY_MIN_TERM_LENGTH,
  MAX_TERM_EXPANSIONS,
  PREFIX_MIN_TERM_LENGTH,
  queryTerms,
  type SerializedTerms,
} from '../../core/search.ts'
import { BitsetCache, hasBit, matchEveryStep } from './intersect.ts'

/** The posting lists left in their file: `read` returns postings [start, start + count) in a fresh array. */
export interface PostingsFile {
  /** How many postings the file holds. */
  readonly length: number
  read(start: number, count: number): Uint32Array
}

/** The bytes of posting lists read from a file kept at once (the most recently used lists). */
const POSTINGS_CACHE_BYTES = 64 << 20

export class TextIndex {
  private readonly vocabulary: SearchableMap<number>
  private readonly starts: Uint32Array
  private readonly counts: Uint32Array
  /** One view per term, made once: the same object each time, so its bitset can be kept (BitsetCache). */
  private readonly views: (Uint32Array | undefined)[]
  /** Lists read from a file, by term id: the same object while cached, so its bitset can be kept meanwhile. */
  private readonly read: LRUCache<number, Uint32Array> | undefined

  /**
   * `retire` is told of each list read from a file that leaves the cache
   * (the query engine then lets its bitset go: BitsetCache.retire).
   */
  constructor(
    serialized: SerializedTerms,
    private readonly postings: Uint32Array | PostingsFile,
    private readonly size: number,
    retire?: (list: Uint32Array) => void,
  ) {
    const n = serialized.terms.length
    this.starts = new Uint32Array(n)
    this.counts = Uint32Array.from(serialized.counts)
    let offset = 0
    for (let i = 0; i < n; i++) {
      this.starts[i] = offset
      offset += this.counts[i]!
    }
    if (offset !== postings.length)
      throw new Error(`text index: counts add up to ${offset} postings, file has ${postings.length}`)
    this.views = new Array<Uint32Array | undefined>(postings instanceof Uint32Array ? n : 0)
    this.read =
      postings instanceof Uint32Array
        ? undefined
        : new LRUCache<number, Uint32Array>({
            maxSize: POSTINGS_CACHE_BYTES,
            sizeCalculation: (list) => Math.max(1, list.byteLength),
            dispose: retire ? (list) => retire(list) : undefined,
          })
    this.vocabulary = SearchableMap.from(serialized.terms.map((term, i) => [term, i] as [string, number]))
  }

  /**
   * Vocabulary ids a query term stands for: itself and its completions; its
   * one-typo neighbours (a letter added, dropped or replaced, or two
   * neighbouring letters swapped) only when it has neither (the typo threshold
   * Typesense uses), so a correctly spelled word stays exact ("miller" does
   * not also find "killer") and a misspelt one still finds something.
   */
  expand(term: string): number[] {
    const ids = new Set<number>()
    const exact = this.vocabulary.get(term)
    if (exact !== undefined) ids.add(exact)
    if (term.length >= PREFIX_MIN_TERM_LENGTH) {
      for (const id of this.vocabulary.atPrefix(term).values()) {
        if (ids.size >= MAX_TERM_EXPANSIONS) break
        ids.add(id)
      }
    }
    if (term.length >= FUZZY_MIN_TERM_LENGTH && ids.size === 0) {
      for (const [id] of this.vocabulary.fuzzyGet(term, 1).values()) {
        if (ids.size >= MAX_TERM_EXPANSIONS) break
        ids.add(id)
      }
      // Two neighbouring letters swapped is one typo to a person, two edits to Levenshtein: looked up directly.
      for (let i = 0; i + 1 < term.length && ids.size < MAX_TERM_EXPANSIONS; i++) {
        if (term[i] === term[i + 1]) continue
        const swapped = term.slice(0, i) + term[i + 1] + term[i] + term.slice(i + 2)
        const id = this.vocabulary.get(swapped)
        if (id !== undefined) ids.add(id)
      }
    }
    return [...ids]
  }

  /**
   * The words of `q` that match nothing (no vocabulary term within expand's
   * prefix and typo rules), each with up to `count` known terms near it:
   * its one-edit neighbours (for words shorter than expand's typo rule) and the completions of its longest prefix (3+
   * characters) that the vocabulary has, ranked by edit distance, then by
   * the jobs that have them. Bounded per word (MAX_QUERY_TERMS words at most)
   * by one one-edit walk of the radix tree and MAX_TERM_EXPANSIONS
   * completions, never a scan of the vocabulary (a two-edit walk took ~30 ms
   * a word over 300k terms); run only when a search came back empty.
   */
  unmatchedWords(q: string, count: number): { word: string; nearest: string[] }[] {
    const out: { word: string; nearest: string[] }[] = []
    for (const term of queryTerms(q)) {
      if (this.expand(term).length > 0) continue
      const candidates = new Map<string, number>()
      // expand already looked one edit away from a word of FUZZY_MIN_TERM_LENGTH or more, and found nothing.
      if (term.length < FUZZY_MIN_TERM_LENGTH)
        for (const [known, [id]] of this.vocabulary.fuzzyGet(term, 1)) candidates.set(known, id)
      for (let length = term.length - 1; length >= PREFIX_MIN_TERM_LENGTH; length--) {
        const completions = this.vocabulary.atPrefix(term.slice(0, length))
        if (completions.size === 0) continue
        for (const [known, id] of completions) {
          if (candidates.size >= MAX_TERM_EXPANSIONS) break
          candidates.set(known, id)
        }
        break
      }
      const ranked = [...candidates].map(([known, id]) => [known, distance(term, known), this.counts[id]!] as const)
      ranked.sort((a, b) => a[1] - b[1] || b[2] - a[2] || (a[0] < b[0] ? -1 : 1))
      out.push({ word: term, nearest: ranked.slice(0, count).map(([known]) => known) })
    }
    return out
  }

  /**
   * The posting lists of each query term's expansions (views into the one
   * postings array, nothing copied): a position matches `q` when it is in
   * some list of every term. Undefined when a term matches nothing.
   */
  termPostings(q: string): Uint32Array[][] | undefined {
    const steps: Uint32Array[][] = []
    for (const term of queryTerms(q)) {
      const ids = this.expand(term)
      if (ids.length === 0) return undefined
      steps.push(ids.map((id) => this.list(id)))
    }
    return steps
  }

  /** Term `id`'s posting list: a view made once, or read from the file (then checked, and cached). */
  private list(id: number): Uint32Array {
    const postings = this.postings
    if (postings instanceof Uint32Array) {
      this.views[id] ??= postings.subarray(this.starts[id]!, this.starts[id]! + this.counts[id]!)
      return this.views[id]
    }
    let list = this.read!.get(id)
    if (list === undefined) {
      list = postings.read(this.starts[id]!, this.counts[id]!)
      // Ascending positions: the last is the largest. The file's hash was checked, so this is belt and braces.
      if (list.length > 0 && list[list.length - 1]! >= this.size)
        throw new Error(`text index: a posting list points past the last job (${this.size})`)
      this.read!.set(id, list)
    }
    return list
  }

  private matchBitsets: BitsetCache | undefined

  /** A mask of positions matching every term of `q` (all zero when a term matches nothing); the query engine uses termPostings. */
  match(q: string): Uint8Array {
    const mask = new Uint8Array(this.size)
    const steps = this.termPostings(q)
    if (steps === undefined) return mask
    if (steps.length === 0) return mask.fill(1)
    this.matchBitsets ??= new BitsetCache(this.size)
    try {
      const bits = matchEveryStep(
        steps.map((lists) => ({ lists })),
        this.matchBitsets,
      )
      for (let p = 0; p < this.size; p++) mask[p] = hasBit(bits, p) ? 1 : 0
      return mask
    } finally {
      this.matchBitsets.returnScratch()
    }
  }
}

/**
 * Slug -> date position without a string per slug: the slugs packed into one
 * string (by position) and an open-addressing table of positions. A Map held
 * a million slug strings at 1M jobs, and every full collection marked each
 * of them.
 */
import type { Steps } from '../../core/steps.ts'

export class SlugTable {
  private readonly joined: string
  /** offsets[p]..offsets[p + 1] is position p's slug in `joined`. */
  private readonly offsets: Uint32Array
  /** position + 1 per slot, 0 for an empty one; at least twice as many slots as slugs. */
  private readonly slots: Int32Array
  private readonly mask: number

  /**
   * `slugs` by position, as strings or already joined with offsets (UTF-16
   * code units) per position (index/jobs.bin: then no string per slug is
   * made); a slug given twice names the later position (as Map.set would).
   */
  constructor(slugs: readonly string[] | { joined: string; offsets: Uint32Array }, fill = true) {
    if (Array.isArray(slugs)) {
      const offsets = new Uint32Array(slugs.length + 1)
      for (let p = 0; p < slugs.length; p++) offsets[p + 1] = offsets[p]! + slugs[p]!.length
      this.offsets = offsets
      this.joined = slugs.join('')
    } else {
      const packed = slugs as { joined: string; offsets: Uint32Array }
      this.offsets = packed.offsets
      this.joined = packed.joined
    }
    const n = this.offsets.length - 1
    let capacity = 16
    while (capacity < n * 2) capacity *= 2
    this.slots = new Int32Array(capacity)
    this.mask = capacity - 1
    if (fill) this.insert(0, n)
  }

  /** The table made in steps of `perStep` slugs (SlugTable over 1M slugs is hundreds of milliseconds). */
  static *inSteps(slugs: { joined: string; offsets: Uint32Array }, perStep = 100_000): Steps<SlugTable> {
    const table = new SlugTable(slugs, false)
    for (let from = 0; from < table.size; from += perStep) {
      table.insert(from, Math.min(table.size, from + perStep))
      yield
    }
    return table
  }

  /** Enters positions from..to-1 (in order: a slug given twice names the later position). */
  private insert(from: number, to: number): void {
    for (let p = from; p < to; p++) this.slots[this.slotAt(p)] = p + 1
  }

  get size(): number {
    return this.offsets.length - 1
  }

  /** The slug at `position`. */
  at(position: number): string {
    return this.joined.slice(this.offsets[position]!, this.offsets[position + 1]!)
  }

  positionOf(slug: string): number | undefined {
    const held = this.slots[this.slotOf(slug)]!
    return held === 0 ? undefined : held - 1
  }

  /** The slot holding position p's slug (an earlier position's when they are equal), or the empty slot where it goes. */
  private slotAt(p: number): number {
    const start = this.offsets[p]!
    const end = this.offsets[p + 1]!
    let hash = 0x811c9dc5
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ this.joined.charCodeAt(i), 0x01000193)
    let slot = (hash >>> 0) & this.mask
    for (;;) {
      const held = this.slots[slot]!
      if (held === 0 || this.holdsRange(held - 1, start, end)) return slot
      slot = (slot + 1) & this.mask
    }
  }

  private holdsRange(position: number, start: number, end: number): boolean {
    const at = this.offsets[position]!
    if (this.offsets[position + 1]! - at !== end - start) return false
    for (let i = 0; i < end - start; i++)
      if (this.joined.charCodeAt(at + i) !== this.joined.charCodeAt(start + i)) return false
    return true
  }

  /** The slot holding `slug`, or the empty slot where it would go. */
  private slotOf(slug: string): number {
    let slot = fnv1a(slug) & this.mask
    for (;;) {
      const held = this.slots[slot]!
      if (held === 0 || this.holds(held - 1, slug)) return slot
      slot = (slot + 1) & this.mask
    }
  }

  private holds(position: number, slug: string): boolean {
    const start = this.offsets[position]!
    // One native comparison: a loop of charCodeAt was half a lookup's ~0.4 us.
    return this.offsets[position + 1]! - start === slug.length && this.joined.startsWith(slug, start)
  }
}

/** 32-bit FNV-1a over UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

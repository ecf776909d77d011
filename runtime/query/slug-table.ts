/**
 * Slug -> date position without a string per slug: the slugs packed into one
 * string or kept as the file's ASCII bytes (by position; core/packed-text.ts)
 * and an open-addressing table of positions (core/slug-slots.ts:
 * index/jobs.bin holds it, else it is made at load). A Map held a million
 * slug strings at 1M jobs, and every full collection marked each of them.
 */
import { joinedString, type PackedText, textSlice } from '../../core/packed-text.ts'
import { slugHash, slugSlotCount, slugSlotsSteps } from '../../core/slug-slots.ts'
import { runSteps, type Steps } from '../../core/steps.ts'

export class SlugTable {
  private readonly joined: string | Buffer
  /** offsets[p]..offsets[p + 1] is position p's slug in `joined`. */
  private readonly offsets: Uint32Array
  /** The table (core/slug-slots.ts): per slot, position + 1 (0: empty) and the slug's hash. */
  private readonly slots: Int32Array
  private readonly mask: number

  /**
   * `slugs` by position, as strings or already joined with offsets (UTF-16
   * code units) per position (index/jobs.bin: then no string per slug is
   * made), and the table when it was made already (fillSlugSlots); a slug
   * given twice names the later position (as Map.set would).
   */
  constructor(slugs: readonly string[] | PackedText, slots?: Int32Array) {
    if (Array.isArray(slugs)) {
      const offsets = new Uint32Array(slugs.length + 1)
      for (let p = 0; p < slugs.length; p++) offsets[p + 1] = offsets[p]! + slugs[p]!.length
      this.offsets = offsets
      this.joined = slugs.join('')
    } else {
      const packed = slugs as PackedText
      this.offsets = packed.offsets
      this.joined = packed.joined
    }
    const capacity = slugSlotCount(this.size)
    if (slots !== undefined && slots.length !== capacity * 2)
      throw new Error(`slug table: ${slots.length} int32s for ${this.size} slugs, expected ${capacity * 2}`)
    this.slots = slots ?? runSteps(slugSlotsSteps({ joined: joinedString(this.joined), offsets: this.offsets }))
    this.mask = capacity - 1
  }

  /** The table made in steps of `perStep` slugs (over 1M slugs it is hundreds of milliseconds), unless `slots` holds it. */
  static *inSteps(slugs: PackedText, perStep = 100_000, slots?: Int32Array): Steps<SlugTable> {
    if (slots !== undefined) return new SlugTable(slugs, slots)
    const joined = joinedString(slugs.joined)
    return new SlugTable(slugs, yield* slugSlotsSteps({ joined, offsets: slugs.offsets }, perStep))
  }

  get size(): number {
    return this.offsets.length - 1
  }

  /** The slug at `position`. */
  at(position: number): string {
    return textSlice(this.joined, this.offsets[position]!, this.offsets[position + 1]!)
  }

  positionOf(slug: string): number | undefined {
    const { slots, mask } = this
    const hash = slugHash(slug)
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const held = slots[slot * 2]!
      if (held === 0) return undefined
      if (slots[slot * 2 + 1] === hash && this.holds(held - 1, slug)) return held - 1
    }
  }

  private holds(position: number, slug: string): boolean {
    const start = this.offsets[position]!
    const end = this.offsets[position + 1]!
    if (end - start !== slug.length) return false
    const { joined } = this
    // One native comparison: a loop of charCodeAt over both strings was half a lookup's ~0.4 us.
    if (typeof joined === 'string') return joined.startsWith(slug, start)
    // ASCII bytes against the slug's code units, in JavaScript: a string made to compare cost more (a native call).
    for (let i = 0; i < slug.length; i++) if (joined[start + i] !== slug.charCodeAt(i)) return false
    return true
  }
}

/**
 * Slug -> date position without a string per slug: the slugs packed into one
 * string (by position) and an open-addressing table of positions. A Map held
 * a million slug strings at 1M jobs, and every full collection marked each
 * of them.
 */
export class SlugTable {
  private readonly joined: string
  /** offsets[p]..offsets[p + 1] is position p's slug in `joined`. */
  private readonly offsets: Uint32Array
  /** position + 1 per slot, 0 for an empty one; at least twice as many slots as slugs. */
  private readonly slots: Int32Array
  private readonly mask: number

  /** `slugs` by position; a slug given twice names the later position (as Map.set would). */
  constructor(slugs: readonly string[]) {
    const offsets = new Uint32Array(slugs.length + 1)
    for (let p = 0; p < slugs.length; p++) offsets[p + 1] = offsets[p]! + slugs[p]!.length
    this.offsets = offsets
    this.joined = slugs.join('')
    let capacity = 16
    while (capacity < slugs.length * 2) capacity *= 2
    this.slots = new Int32Array(capacity)
    this.mask = capacity - 1
    for (let p = 0; p < slugs.length; p++) {
      const slot = this.slotOf(slugs[p]!)
      this.slots[slot] = p + 1
    }
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
    if (this.offsets[position + 1]! - start !== slug.length) return false
    for (let i = 0; i < slug.length; i++) if (this.joined.charCodeAt(start + i) !== slug.charCodeAt(i)) return false
    return true
  }
}

/** 32-bit FNV-1a over UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

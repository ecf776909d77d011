/**
 * The open-addressing table that finds a job's date position from its slug
 * (runtime/query/slug-table.ts), as plain int32s, so that the build can make
 * it once and write it into index/jobs.bin: made at load, it was ~0.3 s of
 * CPU of every worker's start at 1M jobs (a hash and a cache miss per slug).
 *
 * Two int32s per slot: position + 1 (0 for an empty slot) and the slug's
 * hash (32-bit FNV-1a over its UTF-16 code units); a power of two of slots,
 * at least twice as many as slugs, probed linearly from hash & (slots - 1).
 * A probe compares the hash held in the slot and reads the slug only when it
 * is equal: comparing the slug in every slot probed cost two more cache
 * misses (its offsets, then its text).
 */
import type { Steps } from './steps.ts'

/** Slugs joined into one string, offsets[p]..offsets[p + 1] (UTF-16 code units) the one at position p. */
export interface JoinedSlugs {
  joined: string
  offsets: Uint32Array
}

/** How many slots a table of `count` slugs has. */
export function slugSlotCount(count: number): number {
  let capacity = 16
  while (capacity < count * 2) capacity *= 2
  return capacity
}

/** 32-bit FNV-1a over text[start, end)'s UTF-16 code units, as a signed int32 (as the slots hold it). */
export function slugHash(text: string, start = 0, end = text.length): number {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash | 0
}

/** Whether the slugs at two positions are equal. */
function sameSlug({ joined, offsets }: JoinedSlugs, a: number, b: number): boolean {
  const at = offsets[a]!
  const bt = offsets[b]!
  const length = offsets[a + 1]! - at
  if (offsets[b + 1]! - bt !== length) return false
  for (let i = 0; i < length; i++) if (joined.charCodeAt(at + i) !== joined.charCodeAt(bt + i)) return false
  return true
}

/**
 * Enters positions from..to-1 into `slots` (2 * slugSlotCount int32s), in
 * order: a slug given twice names the later position (as Map.set would).
 */
function fillSlugSlots(slugs: JoinedSlugs, slots: Int32Array, from: number, to: number): void {
  const { joined, offsets } = slugs
  const mask = slots.length / 2 - 1
  for (let p = from; p < to; p++) {
    const hash = slugHash(joined, offsets[p]!, offsets[p + 1]!)
    let slot = hash & mask
    for (;;) {
      const held = slots[slot * 2]!
      if (held === 0 || (slots[slot * 2 + 1] === hash && sameSlug(slugs, held - 1, p))) break
      slot = (slot + 1) & mask
    }
    slots[slot * 2] = p + 1
    slots[slot * 2 + 1] = hash
  }
}

/** The whole table, `perStep` slugs per step. */
export function* slugSlotsSteps(slugs: JoinedSlugs, perStep = 100_000): Steps<Int32Array> {
  const count = slugs.offsets.length - 1
  const slots = new Int32Array(slugSlotCount(count) * 2)
  for (let from = 0; from < count; from += perStep) {
    fillSlugSlots(slugs, slots, from, Math.min(count, from + perStep))
    yield
  }
  return slots
}

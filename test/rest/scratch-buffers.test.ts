/**
 * The reusable buffers v1 pages are read into (runtime/http/scratch-buffers.ts):
 * a buffer comes back only through its own release, once, and the pool keeps
 * a bounded number between uses. (precomputed-path.test.ts checks, over
 * HTTP, that no buffer is given back before its bytes were sent.)
 */
import { describe, expect, it } from 'vitest'
import { ScratchBuffers } from '../../runtime/index.ts'

describe('ScratchBuffers', () => {
  it('gives a buffer of at least the length asked, in power-of-two sizes from 64 KiB', () => {
    const pool = new ScratchBuffers()
    expect(pool.take(10).bytes.length).toBe(64 << 10)
    expect(pool.take(64 << 10).bytes.length).toBe(64 << 10)
    expect(pool.take((64 << 10) + 1).bytes.length).toBe(128 << 10)
    expect(pool.take(300_000).bytes.length).toBe(512 << 10)
  })

  it('hands a released buffer out again, and never one still taken', () => {
    const pool = new ScratchBuffers()
    const first = pool.take(1000)
    const second = pool.take(1000)
    expect(second.bytes).not.toBe(first.bytes)
    first.release()
    const third = pool.take(1000)
    expect(third.bytes).toBe(first.bytes)
    expect(pool.take(1000).bytes, 'first is taken again: a fresh one').not.toBe(first.bytes)
  })

  it('a second release of one take gives nothing back twice', () => {
    const pool = new ScratchBuffers()
    const scratch = pool.take(1000)
    scratch.release()
    scratch.release()
    const a = pool.take(1000)
    const b = pool.take(1000)
    expect(a.bytes).toBe(scratch.bytes)
    expect(b.bytes, 'the same bytes for two takers').not.toBe(a.bytes)
  })

  it('keeps at most maxFree buffers of a size between uses', () => {
    const pool = new ScratchBuffers(3)
    const taken = Array.from({ length: 10 }, () => pool.take(1000))
    for (const scratch of taken) scratch.release()
    expect(pool.freeBytes).toBe(3 * (64 << 10))
  })
})

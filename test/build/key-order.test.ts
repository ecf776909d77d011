import { describe, expect, it } from 'vitest'
import { orderByKey } from '../../core/index.ts'

/** The order orderByKey stands in for: a callback sort by key, then position, NaN last. */
function byCallback(keys: Float64Array, descending: boolean): number[] {
  return Array.from(keys, (_, p) => p).sort((a, b) => {
    const nanA = Number.isNaN(keys[a]!)
    const nanB = Number.isNaN(keys[b]!)
    if (nanA || nanB) return nanA === nanB ? a - b : nanA ? 1 : -1
    return (descending ? keys[b]! - keys[a]! : keys[a]! - keys[b]!) || a - b
  })
}

/** Keys with many ties, some NaN, infinities, -0 and 0, and fractions. */
function keysOf(n: number, seed: number): Float64Array {
  let state = seed
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31
    return state / 2 ** 31
  }
  return Float64Array.from({ length: n }, () => {
    const roll = next()
    if (roll < 0.1) return NaN
    if (roll < 0.12) return Infinity
    if (roll < 0.13) return -Infinity
    if (roll < 0.15) return roll < 0.14 ? -0 : 0
    if (roll < 0.5) return Math.round(next() * 50) * 1000
    return next() * 1e6 - 1e5
  })
}

describe('orderByKey: positions by key, ties by position, NaN last', () => {
  for (const descending of [false, true])
    it(`is the callback sort's order (${descending ? 'descending' : 'ascending'})`, () => {
      for (const [n, seed] of [
        [0, 1],
        [1, 2],
        [7, 3],
        [5_000, 4],
        [60_000, 5],
      ] as const) {
        const keys = keysOf(n, seed)
        expect([...orderByKey(keys, descending)], `${n} keys`).toEqual(byCallback(keys, descending))
      }
    })

  it('keeps the salary order the builds write: highest first, none last, ties newest first', () => {
    const highs = Float64Array.from([50_000, NaN, 90_000, 50_000, NaN, 120_000])
    expect([...orderByKey(highs, true)]).toEqual([5, 2, 0, 3, 1, 4])
  })
})

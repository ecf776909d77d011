/**
 * Hot swaps one worker at a time (runtime/server/reload-turns.ts): the
 * primary's turn keeper and the workers' side, joined by an in-process
 * channel that passes messages as the cluster's IPC does (asynchronously).
 * That two real workers' loads do not overlap is in workers.test.ts.
 */
import { describe, expect, it, vi } from 'vitest'
import { ReloadTurns, reloadTurnClient, type TurnChannel } from '../../runtime/index.ts'

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
const quiet = () => {}

/** A primary and `count` workers; `sent` records every message a worker sent. */
function cluster(count: number, options: { maxHoldMs?: number; maxWaitMs?: number } = {}) {
  const listeners = new Map<number, (message: unknown) => void>()
  const sent: { worker: number; message: unknown }[] = []
  const granted: number[] = []
  const turns = new ReloadTurns(
    (worker) => {
      granted.push(worker)
      setImmediate(() => listeners.get(worker)?.({ type: 'jobsnap:reload-turn', granted: true }))
    },
    quiet,
    options.maxHoldMs,
  )
  const workers = Array.from({ length: count }, (_, i) => {
    const id = i + 1
    const channel: TurnChannel = {
      send(message) {
        sent.push({ worker: id, message })
        setImmediate(() => turns.answer(id, message))
      },
      on(_event, listener) {
        listeners.set(id, listener)
      },
    }
    return reloadTurnClient(channel, quiet, options.maxWaitMs)
  })
  return { turns, workers, granted, sent }
}

describe('reload turns', () => {
  it('grants one turn at a time, in the order asked, each once the one before is handed back', async () => {
    const { turns, workers, granted } = cluster(3)
    const order: string[] = []
    const swap = async (worker: number) => {
      const handBack = await workers[worker - 1]!()
      order.push(`start ${worker}`)
      await nextTurn()
      await nextTurn()
      order.push(`end ${worker}`)
      handBack()
    }
    await Promise.all([swap(1), swap(2), swap(3)])
    expect(order).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3'])
    expect(granted).toEqual([1, 2, 3])
    await nextTurn()
    expect(turns.loading).toBeUndefined()
  })

  it('passes the turn on when its worker exits, and forgets an exited worker that was waiting', async () => {
    const { turns, granted } = cluster(0)
    turns.answer(1, { type: 'jobsnap:reload-turn', ask: true })
    turns.answer(2, { type: 'jobsnap:reload-turn', ask: true })
    turns.answer(3, { type: 'jobsnap:reload-turn', ask: true })
    expect(turns.loading).toBe(1)
    turns.leave(2)
    turns.leave(1)
    expect(turns.loading).toBe(3)
    expect(granted).toEqual([1, 3])
  })

  it('ignores a hand-back from a worker that does not hold the turn, and a repeated ask', async () => {
    const { turns, granted } = cluster(0)
    turns.answer(1, { type: 'jobsnap:reload-turn', ask: true })
    turns.answer(1, { type: 'jobsnap:reload-turn', ask: true })
    turns.answer(2, { type: 'jobsnap:reload-turn', ask: true })
    turns.answer(2, { type: 'jobsnap:reload-turn', done: true })
    expect(turns.loading).toBe(1)
    turns.answer(1, { type: 'jobsnap:reload-turn', done: true })
    expect(turns.loading).toBe(2)
    turns.answer(2, { type: 'jobsnap:reload-turn', done: true })
    expect(turns.loading).toBeUndefined()
    expect(granted).toEqual([1, 2])
    expect(turns.answer(1, { type: 'jobsnap:limits' })).toBe(false)
  })

  it('passes on a turn held longer than maxHoldMs', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const { turns, granted } = cluster(0, { maxHoldMs: 1000 })
      turns.answer(1, { type: 'jobsnap:reload-turn', ask: true })
      turns.answer(2, { type: 'jobsnap:reload-turn', ask: true })
      vi.advanceTimersByTime(999)
      expect(turns.loading).toBe(1)
      vi.advanceTimersByTime(1)
      expect(turns.loading).toBe(2)
      // Handed back in time: no timer left to pass on a turn nobody holds.
      turns.answer(2, { type: 'jobsnap:reload-turn', done: true })
      expect(vi.getTimerCount()).toBe(0)
      expect(granted).toEqual([1, 2])
    } finally {
      vi.useRealTimers()
    }
  })

  it('a worker not granted a turn within maxWaitMs loads anyway, and hands back a grant that comes later', async () => {
    const { turns, workers, sent } = cluster(2, { maxWaitMs: 20 })
    const first = await workers[0]!() // granted: worker 1 holds the turn and keeps it
    const started = performance.now()
    const second = await workers[1]!()
    expect(performance.now() - started).toBeGreaterThanOrEqual(15)
    second() // loaded anyway: its hand-back reaches a primary that has not granted it yet
    await nextTurn()
    first()
    // The primary now grants worker 2, which no longer waits: it hands the turn straight back.
    for (let i = 0; i < 5; i++) await nextTurn()
    expect(turns.loading).toBeUndefined()
    expect(sent.filter((s) => s.worker === 2).map((s) => s.message)).toEqual([
      { type: 'jobsnap:reload-turn', ask: true },
      { type: 'jobsnap:reload-turn', done: true },
      { type: 'jobsnap:reload-turn', done: true },
    ])
  })
})

/**
 * Hot swaps in a cluster, one worker at a time. Every worker follows
 * `current` itself, so a publish reaches them all at the same instant, and
 * loading a snapshot is about a second of one core at 1M jobs. Loading
 * together, N workers on a machine with fewer spare cores than that stretch
 * each step of each load, and a request that arrives during a step waits for
 * all of it: at 1M jobs, two workers on two cores under load, the longest
 * request of a swap was 120-240 ms loading together against ~50 ms for one
 * process (bench/swap-pause.ts). So a worker asks the primary for a turn
 * before it loads and hands it back after; the others go on serving the
 * snapshot they hold meanwhile. A worker's first load, at start, takes no
 * turn: nothing is served yet.
 *
 * A turn is not held forever: the primary passes it on when its worker exits
 * or after `maxHoldMs`, and a worker that has waited `maxWaitMs` loads
 * anyway, so a lost message delays a swap rather than stopping it.
 */

/** Worker -> primary: `ask` for a turn, or hand it back once loaded (`done`). */
interface TurnRequest {
  type: 'jobsnap:reload-turn'
  ask?: true
  done?: true
}

/** Primary -> worker: the turn is yours. */
interface TurnGrant {
  type: 'jobsnap:reload-turn'
  granted: true
}

function isTurnMessage(message: unknown): message is TurnRequest | TurnGrant {
  return typeof message === 'object' && message !== null && (message as TurnRequest).type === 'jobsnap:reload-turn'
}

type Log = (message: string, fields?: Record<string, unknown>, level?: 'info' | 'warn') => void

/** The primary's side: which worker loads now, and who waits, in the order they asked. */
export class ReloadTurns {
  private holder: number | undefined
  private holdTimer: NodeJS.Timeout | undefined
  private readonly waiting: number[] = []

  constructor(
    /** Tells a worker the turn is its own. */
    private readonly grant: (workerId: number) => void,
    private readonly log: Log,
    /** Longer than any load: after it the turn goes to the next worker anyway. */
    private readonly maxHoldMs = 60_000,
  ) {}

  /** Handles a worker's message; true when it was about turns. */
  answer(workerId: number, message: unknown): boolean {
    if (!isTurnMessage(message)) return false
    const request = message as TurnRequest
    if (request.ask) {
      if (this.holder !== workerId && !this.waiting.includes(workerId)) this.waiting.push(workerId)
      this.next()
    } else if (request.done && this.holder === workerId) {
      this.release()
    }
    return true
  }

  /** A worker exited: the turn it held or waited for goes to the next. */
  leave(workerId: number): void {
    const at = this.waiting.indexOf(workerId)
    if (at >= 0) this.waiting.splice(at, 1)
    if (this.holder === workerId) this.release()
  }

  /** The worker loading now, if any. */
  get loading(): number | undefined {
    return this.holder
  }

  private release(): void {
    clearTimeout(this.holdTimer)
    this.holder = undefined
    this.next()
  }

  private next(): void {
    if (this.holder !== undefined) return
    const workerId = this.waiting.shift()
    if (workerId === undefined) return
    this.holder = workerId
    this.holdTimer = setTimeout(() => {
      this.log('a worker held its reload turn too long; passing it on', { worker: workerId }, 'warn')
      this.release()
    }, this.maxHoldMs)
    this.holdTimer.unref()
    this.grant(workerId)
  }
}

/** The channel to the primary: `process` in a cluster worker. */
export interface TurnChannel {
  send(message: TurnRequest): unknown
  on(event: 'message', listener: (message: unknown) => void): unknown
}

/**
 * The worker's side: resolves once the primary grants a turn (or `maxWaitMs`
 * has passed), with the function that hands it back.
 */
export function reloadTurnClient(channel: TurnChannel, log: Log, maxWaitMs = 120_000): () => Promise<() => void> {
  let granted: (() => void) | undefined
  channel.on('message', (message) => {
    if (!isTurnMessage(message) || !(message as TurnGrant).granted) return
    // A grant after this worker stopped waiting (and loaded anyway): handed straight back.
    if (granted) granted()
    else send(channel, { type: 'jobsnap:reload-turn', done: true })
  })
  return () =>
    new Promise((resolve) => {
      const handBack = () => send(channel, { type: 'jobsnap:reload-turn', done: true })
      const timer = setTimeout(() => {
        granted = undefined
        log('no reload turn from the primary in time; loading anyway', { waited_ms: maxWaitMs }, 'warn')
        resolve(handBack)
      }, maxWaitMs)
      timer.unref()
      granted = () => {
        granted = undefined
        clearTimeout(timer)
        resolve(handBack)
      }
      if (!send(channel, { type: 'jobsnap:reload-turn', ask: true })) {
        granted = undefined
        clearTimeout(timer)
        resolve(() => {})
      }
    })
}

/** False when there is no primary to send to: it is going away, and this worker with it. */
function send(channel: TurnChannel, message: TurnRequest): boolean {
  try {
    channel.send(message)
    return true
  } catch {
    return false
  }
}

/**
 * Work done in steps: a generator that yields between steps, each bounded
 * (tens of milliseconds at 1M jobs). Run to the end at once (runSteps), or
 * with a pause at every yield (runStepsPausing) so that a hot swap, which
 * loads the next snapshot while the current one serves, lets requests run
 * between steps instead of stalling them for the whole load.
 */
export type Steps<T> = Generator<void, T, void>

export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next()
    if (next.done) return next.value
  }
}

export async function runStepsPausing<T>(steps: Steps<T>, pause: () => Promise<void>): Promise<T> {
  for (;;) {
    const next = steps.next()
    if (next.done) return next.value
    await pause()
  }
}

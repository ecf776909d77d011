/**
 * One full garbage collection, on demand. After a hot swap the previous
 * snapshot (its packed bodies and index: ~190 MB at 100k jobs, mostly
 * outside the JS heap) is garbage, but V8 sees no reason to run a full
 * collection soon: the JS heap barely grew, and external memory only
 * triggers one while it grows. Under steady load the process then held two
 * snapshots for minutes (RSS +50% after the first swap, measured with the
 * soak). Asking once, shortly after each swap, returns that memory.
 *
 * V8 gives JavaScript its `gc()` only under --expose-gc; setting the flag
 * at run time and reading `gc` from a fresh context is the way to get it
 * without asking every launcher (npm start, cluster workers, tests) to pass
 * the flag.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

let gc: (() => void) | undefined

export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as () => void
  }
  gc()
}

/**
 * How far the old generation may grow past what the last full collection
 * kept before V8 starts the next one: twice that, where V8's own factor for
 * a busy server's heap came out near 1.4. Under the uncached list mix at 1M
 * jobs that is 0.14-0.17 full collections per 1,000 requests instead of
 * 0.5-0.84 (each one's incremental marking, concurrent marking on the other
 * core and final pause a delay for the requests in flight), for a heap at
 * most the live size larger between collections (~50 MB at 1M jobs). Set
 * from inside the process, so every launcher gets it; a
 * `--heap-growing-percent` given to Node (NODE_OPTIONS or its command line)
 * wins.
 */
import { setFlagsFromString } from 'node:v8'

const FLAG = '--heap-growing-percent'
const GROWING_PERCENT = 100

let set = false

export function setHeapGrowth(): void {
  if (set) return
  set = true
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
  if (given.some((arg) => arg.replaceAll('_', '-').startsWith(FLAG))) return
  setFlagsFromString(`${FLAG}=${GROWING_PERCENT}`)
}

/**
 * Young-generation collections (scavenges) on the server's own thread when
 * its processes are as many as the cores or more. V8 scavenges with helper
 * threads and the pause lasts until the last of them is done; with every
 * core busy with another worker (or the load balancer, or a build), a helper
 * waits its turn for the CPU and the pause waits with it. During hot swaps
 * at 1M jobs with `--workers 2` on 2 cores, scavenges of 60-96 ms were the
 * longest stalls; scavenging alone, the longest were 17-28 ms
 * (bench/swap-pause.ts, the pauses read from perf_hooks `gc` entries). Set
 * from inside the process, so every launcher gets it; a `--parallel-scavenge`
 * or `--no-parallel-scavenge` given to Node wins.
 */
import { availableParallelism } from 'node:os'
import { setFlagsFromString } from 'node:v8'

const FLAG = 'parallel-scavenge'

export function scavengeAloneWhenCoresAreShared(processes: number, cores = availableParallelism()): void {
  if (processes < cores) return
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
  const flags = given.map((arg) => arg.replaceAll('_', '-').replace(/^--no-/, '--'))
  if (flags.some((flag) => flag.startsWith(`--${FLAG}`))) return
  setFlagsFromString(`--no-${FLAG}`)
}

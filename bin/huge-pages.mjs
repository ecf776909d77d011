/**
 * `jobsnap build`, `serve` and `generate` rerun themselves with glibc's malloc
 * backing large allocations with transparent huge pages
 * (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`: malloc asks the kernel for 2 MB pages
 * with madvise). Each 4 KB page touched for the first time is a page fault, and
 * on the virtual machines measured here a fault is dear. A 1M build reads and
 * writes gigabytes through fresh buffers: reading a 1 GB file into a new buffer
 * took 3.3 s with 4 KB pages and 1.3 to 2.1 s with huge pages, and a 1% rebuild's
 * system time went from ~31 to ~20 s. A server loading a 1M snapshot fills
 * hundreds of MB of typed arrays: spawn to ready went from 3.8-4.3 s to 3.0-3.2 s,
 * this launcher's own start included, for the same own memory within 2%
 * (`bench/memory.ts --evict`). glibc reads the setting only when a process
 * starts, hence a second process rather than a switch.
 *
 * Plain JavaScript, run before tsx loads: the rerun costs one bare Node start
 * (~0.2 s), and the first process stays as a small launcher (~40 MB) that only
 * passes signals on. A cluster's primary (`serve --workers N`, N > 1) holds
 * little memory of its own: it is not rerun, and its workers, which inherit
 * its environment, start with the setting. Not done where it cannot help (not Linux, another command),
 * when the setting is there already (the rerun itself, a cluster's workers, a
 * caller that chose), or when JOBSNAP_HUGE_PAGES says no. The kernel must allow
 * madvise for huge pages (`/sys/kernel/mm/transparent_hugepage/enabled` at
 * `madvise` or `always`, the usual defaults); where it does not, or where libc is
 * not glibc, the setting is ignored and the command runs as before.
 */
import { spawn } from 'node:child_process'

export const HUGE_PAGES_TUNABLE = 'glibc.malloc.hugetlb=1'

/** JOBSNAP_HUGE_PAGES values that turn it off (as core/config.ts reads a boolean). */
const OFF = /^(false|0|no|off|n|disabled)$/i

/** The commands that allocate enough for huge pages to matter. */
const RERUN_COMMANDS = new Set(['build', 'serve', 'generate'])

/**
 * The command named on the command line: the first argument that is not a flag.
 * @param {readonly string[]} args
 */
const commandOf = (args) => args.find((arg) => !arg.startsWith('-'))

/**
 * The environment to rerun `args` (process.argv after the script) with, or undefined when this
 * process should run the command itself.
 * @param {readonly string[]} args
 * @param {NodeJS.ProcessEnv} [env]
 * @param {NodeJS.Platform} [platform]
 * @returns {NodeJS.ProcessEnv | undefined}
 */
export function hugePagesRerunEnv(args, env = process.env, platform = process.platform) {
  if (platform !== 'linux' || !RERUN_COMMANDS.has(commandOf(args) ?? '')) return undefined
  if (OFF.test(env.JOBSNAP_HUGE_PAGES ?? '')) return undefined
  const tunables = env.GLIBC_TUNABLES ?? ''
  if (tunables.includes('glibc.malloc.hugetlb')) return undefined
  return { ...env, GLIBC_TUNABLES: tunables === '' ? HUGE_PAGES_TUNABLE : `${tunables}:${HUGE_PAGES_TUNABLE}` }
}

/**
 * How many server processes `args` ask `serve` for (`--workers N`, `--workers=N`, else JOBSNAP_WORKERS,
 * as the CLI reads them), or 1 where this launcher cannot tell: the CLI's own parser reports a bad value.
 * @param {readonly string[]} args
 * @param {NodeJS.ProcessEnv} env
 */
export function workersAsked(args, env) {
  let value = env.JOBSNAP_WORKERS
  args.forEach((arg, i) => {
    if (arg === '--workers') value = args[i + 1]
    else if (arg.startsWith('--workers=')) value = arg.slice('--workers='.length)
  })
  const count = Number(value)
  return Number.isInteger(count) && count > 1 ? count : 1
}

/**
 * Reruns this command (same Node flags, same arguments) with huge pages when hugePagesRerunEnv says
 * so, and returns true: this process then only waits, passes on the signals a terminal or a process
 * manager sends, and exits as the rerun did. Returns false when this process should run the command:
 * a cluster's primary then gets the setting into its environment, for the workers it forks (and
 * a build it starts) to inherit; one Node start fewer before the first worker forks.
 * @returns {boolean}
 */
export function rerunWithHugePages() {
  const args = process.argv.slice(2)
  const env = hugePagesRerunEnv(args)
  if (env === undefined) return false
  if (commandOf(args) === 'serve' && workersAsked(args, process.env) > 1) {
    process.env.GLIBC_TUNABLES = env.GLIBC_TUNABLES
    return false
  }
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env })
  /** @type {NodeJS.Signals[]} */
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP']
  /** @param {NodeJS.Signals} signal */
  const forward = (signal) => {
    // Ctrl-C at a terminal reaches every process of the foreground group, the rerun included: passing it on
    // as well would deliver it twice, and a second SIGINT tells a server to stop without closing its
    // connections. Sent to this process alone (a supervisor, `kill -INT`), it is passed on.
    if (signal === 'SIGINT' && process.stdin.isTTY) return
    child.kill(signal)
  }
  for (const signal of signals) process.on(signal, forward)
  child.on('error', (error) => {
    console.error(`jobsnap: could not rerun with huge pages (${error.message}); set JOBSNAP_HUGE_PAGES=0 to skip it`)
    process.exit(1)
  })
  child.on('exit', (code, signal) => {
    for (const name of signals) process.off(name, forward)
    // Dying of the same signal tells the caller (a shell, a CI step) what the rerun died of.
    if (signal !== null) process.kill(process.pid, signal)
    else process.exit(code ?? 1)
  })
  return true
}

/**
 * deploy/varnish.vcl run by Debian's varnishd, for the tests and the
 * benchmark alike: the shipped file with only its backend address pointed at
 * the jobsnap under test (and, for the benchmark, its edge limits raised),
 * the command line that runs it in the foreground with a private working
 * folder, and its counters read with varnishstat.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { LOOPBACK, REPO_ROOT } from './processes.ts'

export const VARNISHD = '/usr/sbin/varnishd'
const VARNISHSTAT = '/usr/bin/varnishstat'

/** Why Varnish cannot run here, or undefined when it can. */
export function varnishMissing(): string | undefined {
  if (existsSync(VARNISHD) && existsSync(VARNISHSTAT)) return undefined
  return `${VARNISHD} is missing: deploy/varnish.vcl runs in Debian's varnish with varnish-modules (xkey, vsthrottle). Install them with \`apt-get install varnish varnish-modules\` (CI's .ci/run does).`
}

/** The backend line deploy/varnish.vcl ships with: the one line an operator changes. */
const BACKEND_LINE = '.host = "127.0.0.1:3000";'

/**
 * deploy/varnish.vcl pointed at jobsnap on `backendPort`; `edits` replace
 * further text (every occurrence), each of which must be in the file.
 */
export async function renderVcl(backendPort: number, edits: [from: string, to: string][] = []): Promise<string> {
  let vcl = await readFile(path.join(REPO_ROOT, 'deploy/varnish.vcl'), 'utf8')
  for (const [from, to] of [[BACKEND_LINE, `.host = "${LOOPBACK}:${backendPort}";`], ...edits] as const) {
    if (!vcl.includes(from)) throw new Error(`deploy/varnish.vcl no longer contains ${JSON.stringify(from)}`)
    vcl = vcl.replaceAll(from, to)
  }
  return vcl
}

/**
 * Edits that take the edge's rate limits out of a load test's way (one load
 * generator is one client address): the two buckets' sizes become a billion.
 */
export const NO_EDGE_LIMITS: [string, string][] = [
  ['60, 60s)', '1000000000, 60s)'],
  ['60, 12s)', '1000000000, 12s)'],
]

/**
 * varnishd's arguments: in the foreground (-F), listening on 127.0.0.1:`port`,
 * its shared memory and compiled VCL in `workDir` (-n), 64 MB of malloc
 * storage unless `storage` says otherwise, no jail (it runs as whoever starts
 * it, so it can read a private folder), no management port.
 */
export function varnishArgs(options: { workDir: string; port: number; vclFile: string; storage?: string }): string[] {
  return [
    '-F',
    '-n',
    options.workDir,
    '-a',
    `${LOOPBACK}:${options.port}`,
    '-f',
    options.vclFile,
    '-s',
    `malloc,${options.storage ?? '64m'}`,
    '-j',
    'none',
    '-T',
    'none',
  ]
}

/** Varnish's counters by name (e.g. MAIN.backend_req, MAIN.cache_hit), read with varnishstat. */
export function varnishCounters(workDir: string, names: string[]): Record<string, number> {
  const run = spawnSync(VARNISHSTAT, ['-n', workDir, '-1', '-j', ...names.flatMap((name) => ['-f', name])], {
    encoding: 'utf8',
    timeout: 10_000,
  })
  if (run.status !== 0) throw new Error(`varnishstat failed (${run.status}): ${run.stderr}`)
  const parsed = JSON.parse(run.stdout) as { counters?: Record<string, { value: number }> }
  // varnishstat 7.1 nests them under `counters`; older versions put them at the top level.
  const counters = (parsed.counters ?? parsed) as Record<string, { value?: number }>
  const values: Record<string, number> = {}
  for (const name of names) values[name] = counters[name]?.value ?? 0
  return values
}

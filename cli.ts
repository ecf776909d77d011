/**
 * The `jobsnap` command: build, serve, generate, rollback, purge. Flags override the
 * environment variables of core/config.ts.
 */
import { type ArgsDef, defineCommand, runMain } from 'citty'
import { spawn } from 'node:child_process'
import cluster from 'node:cluster'
import { once } from 'node:events'
import { constants as osConstants } from 'node:os'
import { z } from 'zod'
import { type Config, loadConfig } from './core/config.ts'
import { publishedSnapshotId } from './core/snapshot.ts'

/**
 * What a command was given that it does not take: citty accepts any flag and
 * positional, and a misspelt one (`--quiett`, `--dist` where the folder is
 * `--out`) silently ignored would run the command on the wrong folder.
 */
function unexpectedArgs(args: Record<string, unknown> & { _?: unknown[] }, defs: ArgsDef): string[] {
  const known = new Set<string>(['_'])
  for (const [name, def] of Object.entries(defs)) {
    known.add(name).add(name.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase()))
    if ('alias' in def) for (const alias of [def.alias ?? []].flat()) known.add(alias)
  }
  return [
    ...Object.keys(args)
      .filter((name) => !known.has(name))
      .map((name) => (name.length === 1 ? `-${name}` : `--${name}`)),
    ...(args._ ?? []).map(String),
  ]
}

/** An RFC 3339 date-time with its offset and a day the calendar has (2026-02-30 is none). */
function isDateTime(text: string): boolean {
  if (!z.iso.datetime({ offset: true }).safeParse(text).success) return false
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/** Refuses (exit 2) what `command` does not take, naming it; true when the arguments are fine. */
function argsTaken(command: string, args: Record<string, unknown>, defs: ArgsDef): boolean {
  const unexpected = unexpectedArgs(args, defs)
  if (unexpected.length === 0) return true
  console.error(`jobsnap ${command}: unknown argument ${unexpected.join(', ')}; see jobsnap ${command} --help`)
  process.exitCode = 2
  return false
}

// A reader that went away (`jobsnap build | head -1`) must not turn a published build into a crash and exit 1.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
  })

const buildArgs = {
  data: { type: 'string', description: 'Dataset folder (JOBSNAP_DATA, default data)' },
  out: { type: 'string', alias: 'dist', description: 'Snapshot folder (JOBSNAP_DIST, default dist; also --dist)' },
  'site-url': { type: 'string', description: 'Public website for the v1 usage notice (JOBSNAP_SITE_URL)' },
  now: { type: 'string', description: 'Reference time for expiry (RFC 3339, e.g. 2026-11-26T00:00:00Z; default: now)' },
  quiet: { type: 'boolean', description: 'No progress output' },
} satisfies ArgsDef

const build = defineCommand({
  meta: { name: 'build', description: 'Validate a dataset and publish a snapshot atomically.' },
  args: buildArgs,
  async run({ args }) {
    if (!argsTaken('build', args, buildArgs)) return
    // Checked before any work: a bad date found after minutes of checking records would waste them.
    const now = args.now === undefined ? undefined : new Date(args.now)
    if (args.now !== undefined && !isDateTime(args.now)) {
      console.error(`jobsnap build: --now must be an RFC 3339 date-time such as 2026-11-26T00:00:00Z; got ${args.now}`)
      process.exitCode = 2
      return
    }
    const config = loadConfig(process.env, {
      JOBSNAP_DATA: args.data,
      JOBSNAP_DIST: args.out,
      JOBSNAP_SITE_URL: args['site-url'],
    })
    const { runBuildCommand } = await import('./build/cli.ts')
    process.exitCode = await runBuildCommand(config, { now, quiet: args.quiet })
  },
})

const generateArgs = {
  jobs: { type: 'string', default: '1200', description: 'Number of job records' },
  companies: { type: 'string', default: '220', description: 'Number of companies' },
  seed: { type: 'string', default: '42', description: 'Random seed' },
  out: { type: 'string', default: 'data', description: 'Output folder (default data: the committed sample)' },
} satisfies ArgsDef

const generate = defineCommand({
  meta: { name: 'generate', description: 'Write a deterministic sample dataset.' },
  args: generateArgs,
  async run({ args }) {
    if (!argsTaken('generate', args, generateArgs)) return
    const { runGenerateCommand } = await import('./build/cli.ts')
    process.exitCode = await runGenerateCommand({
      jobs: Number(args.jobs),
      companies: Number(args.companies),
      seed: Number(args.seed),
      outDir: args.out,
    })
  },
})

const rollbackArgs = {
  out: { type: 'string', alias: 'dist', description: 'Snapshot folder (JOBSNAP_DIST, default dist; also --dist)' },
} satisfies ArgsDef

const rollback = defineCommand({
  meta: {
    name: 'rollback',
    description: 'Republish the snapshot published before the current one (again: the one before that).',
  },
  args: rollbackArgs,
  async run({ args }) {
    if (!argsTaken('rollback', args, rollbackArgs)) return
    const config = loadConfig(process.env, { JOBSNAP_DIST: args.out })
    const { runRollbackCommand } = await import('./build/cli.ts')
    process.exitCode = await runRollbackCommand(config)
  },
})

const purgeArgs = {
  out: { type: 'string', alias: 'dist', description: 'Snapshot folder (JOBSNAP_DIST, default dist; also --dist)' },
  varnish: {
    type: 'string',
    description: 'Varnish to purge: its URL (PURGE with an xkey header), e.g. http://127.0.0.1:6081/',
  },
  fastly: { type: 'string', description: 'Fastly service id to purge (token in FASTLY_API_TOKEN)' },
  cloudflare: { type: 'string', description: 'Cloudflare zone id to purge (token in CLOUDFLARE_API_TOKEN)' },
  soft: {
    type: 'boolean',
    description: 'Fastly soft purge: mark stale (served on error or while revalidating) rather than drop',
  },
  all: {
    type: 'boolean',
    description: 'Purge every jobsnap answer (the `all` tag) rather than what the snapshot changed',
  },
  'wait-for': {
    type: 'string',
    description:
      'jobsnap origins (comma-separated base URLs) whose /ready must name the published snapshot before the purge',
  },
  'wait-seconds': { type: 'string', description: 'How long --wait-for waits, seconds (default 120)' },
} satisfies ArgsDef

const purge = defineCommand({
  meta: {
    name: 'purge',
    description:
      "Purge the published snapshot's changed cache tags (changed-tags.txt) from the shared caches in front.",
  },
  args: purgeArgs,
  async run({ args }) {
    if (!argsTaken('purge', args, purgeArgs)) return
    const config = loadConfig(process.env, { JOBSNAP_DIST: args.out })
    const { runPurgeCommand } = await import('./build/cli.ts')
    process.exitCode = await runPurgeCommand(config, {
      varnish: args.varnish,
      fastly: args.fastly,
      cloudflare: args.cloudflare,
      soft: args.soft,
      all: args.all,
      waitFor: args['wait-for']
        ?.split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
      waitSeconds: args['wait-seconds'] === undefined ? undefined : Number(args['wait-seconds']),
    })
  },
})

const serveArgs = {
  port: { type: 'string', description: 'Port (PORT, default 3000)' },
  host: { type: 'string', description: 'Bind address (HOST, default 127.0.0.1)' },
  dist: { type: 'string', alias: 'out', description: 'Snapshot folder (JOBSNAP_DIST, default dist; also --out)' },
  workers: {
    type: 'string',
    description: 'Server processes sharing the port (JOBSNAP_WORKERS, default 1; e.g. the number of cores)',
  },
  'build-if-missing': { type: 'boolean', description: 'Build from JOBSNAP_DATA first when nothing is published' },
} satisfies ArgsDef

/** Runs `jobsnap build` on the configured folders as this command was started (launcher or tsx), to its exit code. */
async function buildInChild(config: Config): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, 'build'], {
    stdio: 'inherit',
    env: { ...process.env, JOBSNAP_DATA: config.JOBSNAP_DATA, JOBSNAP_DIST: config.JOBSNAP_DIST },
  })
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null]
  return code ?? (signal === null ? 1 : 128 + (osConstants.signals[signal] ?? 0))
}

const serve = defineCommand({
  meta: { name: 'serve', description: 'Serve the published snapshot.' },
  args: serveArgs,
  async run({ args }) {
    if (!argsTaken('serve', args, serveArgs)) return
    const config = loadConfig(process.env, {
      PORT: args.port,
      HOST: args.host,
      JOBSNAP_DIST: args.dist,
      JOBSNAP_WORKERS: args.workers,
    })
    // Building is the build layer's job, run as `jobsnap build` in a process of its own: the server never
    // loads the build pipeline (a bundled server has no build beside it) nor keeps the build's heap.
    if (args['build-if-missing'] && !cluster.isWorker && !(await publishedSnapshotId(config.JOBSNAP_DIST))) {
      console.error(`no snapshot published yet in ${config.JOBSNAP_DIST}; building from ${config.JOBSNAP_DATA}`)
      const code = await buildInChild(config)
      if (code !== 0) process.exit(code)
    }
    const { runServeCommand } = await import('./runtime/cli.ts')
    await runServeCommand(config)
  },
})

runMain(
  defineCommand({
    meta: { name: 'jobsnap', description: 'Live job postings as a static snapshot plus a thin API runtime.' },
    subCommands: { build, generate, serve, rollback, purge },
  }),
)

/**
 * The `jobsnap` command: build, serve, generate. Flags override the
 * environment variables of core/config.ts.
 */
import { defineCommand, runMain } from 'citty'
import cluster from 'node:cluster'
import { loadConfig } from './core/config.ts'
import { publishedSnapshotId } from './core/snapshot.ts'

const build = defineCommand({
  meta: { name: 'build', description: 'Validate a dataset and publish a snapshot atomically.' },
  args: {
    data: { type: 'string', description: 'Dataset folder (JOBSNAP_DATA, default data)' },
    out: { type: 'string', description: 'Snapshot folder (JOBSNAP_DIST, default dist)' },
    'site-url': { type: 'string', description: 'Public website for the v1 usage notice (JOBSNAP_SITE_URL)' },
    now: { type: 'string', description: 'Reference time for expiry (ISO 8601; default: now)' },
    quiet: { type: 'boolean', description: 'No progress output' },
  },
  async run({ args }) {
    const config = loadConfig(process.env, {
      JOBSNAP_DATA: args.data,
      JOBSNAP_DIST: args.out,
      JOBSNAP_SITE_URL: args['site-url'],
    })
    const { runBuildCommand } = await import('./build/cli.ts')
    process.exitCode = await runBuildCommand(config, {
      now: args.now ? new Date(args.now) : undefined,
      quiet: args.quiet,
    })
  },
})

const generate = defineCommand({
  meta: { name: 'generate', description: 'Write a deterministic sample dataset.' },
  args: {
    jobs: { type: 'string', default: '1200', description: 'Number of job records' },
    companies: { type: 'string', default: '220', description: 'Number of companies' },
    seed: { type: 'string', default: '42', description: 'Random seed' },
    out: { type: 'string', default: 'data', description: 'Output folder' },
  },
  async run({ args }) {
    const { runGenerateCommand } = await import('./build/cli.ts')
    process.exitCode = await runGenerateCommand({
      jobs: Number(args.jobs),
      companies: Number(args.companies),
      seed: Number(args.seed),
      outDir: args.out,
    })
  },
})

const rollback = defineCommand({
  meta: { name: 'rollback', description: 'Republish the snapshot built before the current one.' },
  args: { out: { type: 'string', description: 'Snapshot folder (JOBSNAP_DIST, default dist)' } },
  async run({ args }) {
    const config = loadConfig(process.env, { JOBSNAP_DIST: args.out })
    const { runRollbackCommand } = await import('./build/cli.ts')
    process.exitCode = await runRollbackCommand(config)
  },
})

const serve = defineCommand({
  meta: { name: 'serve', description: 'Serve the published snapshot.' },
  args: {
    port: { type: 'string', description: 'Port (PORT, default 3000)' },
    host: { type: 'string', description: 'Bind address (HOST, default 127.0.0.1)' },
    dist: { type: 'string', description: 'Snapshot folder (JOBSNAP_DIST, default dist)' },
    workers: {
      type: 'string',
      description: 'Server processes sharing the port (JOBSNAP_WORKERS, default 1; e.g. the number of cores)',
    },
    'build-if-missing': { type: 'boolean', description: 'Build from JOBSNAP_DATA first when nothing is published' },
  },
  async run({ args }) {
    const config = loadConfig(process.env, {
      PORT: args.port,
      HOST: args.host,
      JOBSNAP_DIST: args.dist,
      JOBSNAP_WORKERS: args.workers,
    })
    // Building is the build layer's job, composed here: the runtime never loads the build pipeline.
    if (args['build-if-missing'] && !cluster.isWorker && !(await publishedSnapshotId(config.JOBSNAP_DIST))) {
      console.error(`no snapshot published yet in ${config.JOBSNAP_DIST}; building from ${config.JOBSNAP_DATA}`)
      const { runBuildCommand } = await import('./build/cli.ts')
      const code = await runBuildCommand(config, {})
      if (code !== 0) process.exit(code)
    }
    const { runServeCommand } = await import('./runtime/cli.ts')
    await runServeCommand(config)
  },
})

runMain(
  defineCommand({
    meta: { name: 'jobsnap', description: 'Live job postings as a static snapshot plus a thin API runtime.' },
    subCommands: { build, generate, serve, rollback },
  }),
)

/** `jobsnap serve`: build when asked and nothing is published, serve, reload on SIGHUP, drain on SIGTERM. */
import type { Config } from '../core/config.ts'
import { publishedSnapshotId } from '../build/publish.ts'
import { startServer, type Logger } from './server.ts'

function createLogger(config: Config): Logger {
  const format = config.JOBSNAP_LOG ?? (process.stdout.isTTY ? 'pretty' : 'json')
  if (format === 'silent') return () => {}
  if (format === 'json') return (message, fields) => console.log(JSON.stringify({ time: new Date().toISOString(), message, ...fields }))
  return (message, fields) => console.log(`${message}${fields ? ` ${Object.entries(fields).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ')}` : ''}`)
}

export async function runServeCommand(config: Config, options: { buildIfMissing: boolean }): Promise<void> {
  const log = createLogger(config)
  if (options.buildIfMissing && !(await publishedSnapshotId(config.JOBSNAP_DIST))) {
    log('no snapshot published yet; building from the dataset', { data: config.JOBSNAP_DATA })
    // Imported only here: the build pipeline (faker, html-to-text, yaml...) is not the server's to load.
    const { runBuildCommand } = await import('../build/cli.ts')
    const code = await runBuildCommand(config, {})
    if (code !== 0) process.exit(code)
  }
  const server = await startServer({ config, log })
  const snapshot = server.snapshots.current
  log(`jobsnap listening on ${server.url}`, { snapshot_id: snapshot.id, live_jobs: snapshot.jobs.size, docs: `${server.url}/docs` })
  process.on('SIGHUP', () => void server.reload())
  const stop = (signal: string) => {
    log('shutting down', { signal })
    void server.close().then(() => process.exit(0))
  }
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))
}

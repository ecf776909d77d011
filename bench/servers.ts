/**
 * The three servers of a run, all on 127.0.0.1 and free ports, all children
 * of this process (killed with it):
 * - jobsnap: the real `cli.ts serve`, production settings, rate limits raised;
 * - nginx (Debian's nginx-light), one worker, serving the snapshot's
 *   single-job files and 25-job v1 pages straight from disk: the reference
 *   for precomputed GETs;
 * - json-server 0.17 with the snapshot's v2 jobs: the reference for
 *   filtered queries.
 * The script installs nothing: a missing reference is reported with the
 * command that installs it, and the rest still runs.
 */
import { spawnSync } from 'node:child_process'
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { cliArgs } from './datasets.ts'
import { jobFileOnDisk, snapshotPaths } from '../core/index.ts'
import { freePort, LOOPBACK } from '../support/processes.ts'
import { memoryOf, rerunOf, smapsOf, startChild, waitForHttp, type Child } from './procs.ts'

export interface RunningServer {
  name: string
  port: number
  child: Child
  /** Spawn to ready, milliseconds. */
  readyMs: number
  version?: string
  /**
   * The process serving (jobsnap's one process, or its cluster's primary), when `child` is only the
   * launcher that reran it with huge pages (bin/huge-pages.mjs); else `child` serves.
   */
  rerunPid?: number
  /** Where its standard output goes, when a file rather than the pipe `child.output()` keeps the tail of. */
  logFile?: string
}

export type Optional<T> = { ok: true; server: T } | { ok: false; reason: string }

const NO_LIMIT = '1000000000'

/**
 * `node --import tsx cli.ts serve` with production settings: logs off, rate limits out of the way.
 * With `workers` > 1 the cluster's primary logs (JSON) the line that carries every worker's
 * ready time and the total RSS; `clusterFacts` reads it.
 */
export async function startJobsnap(
  repoDir: string,
  distDir: string,
  readyTimeoutMs: number,
  workers = 1,
  /** Settings on top of the bench's (e.g. metrics or access logs on or off). */
  extraEnv: Record<string, string> = {},
  /** Where its standard output goes instead of a pipe this process reads (access logs: as a log file would). */
  stdoutFile?: string,
): Promise<RunningServer> {
  const port = await freePort()
  // A cluster logs JSON lines, one per request: to a file, as in production. Into a pipe they were read by
  // this process, which then took CPU from the servers (and ran the load generator, in some benches).
  const logFile =
    stdoutFile ?? (workers > 1 ? path.join(tmpdir(), `jobsnap-bench-${process.pid}-${port}.log`) : undefined)
  const stdout = logFile === undefined ? 'pipe' : openSync(logFile, 'a')
  const child = startChild(
    workers > 1 ? `jobsnap --workers ${workers}` : 'jobsnap',
    process.execPath,
    cliArgs('serve', '--port', String(port), '--host', LOOPBACK, '--dist', distDir, '--workers', String(workers)),
    {
      cwd: repoDir,
      stdio: ['ignore', stdout, 'pipe'],
      env: {
        ...process.env,
        NODE_ENV: 'production',
        JOBSNAP_LOG: workers > 1 ? 'json' : 'silent',
        JOBSNAP_REST_LIMIT: NO_LIMIT,
        JOBSNAP_MCP_BURST: NO_LIMIT,
        JOBSNAP_MCP_RATE: NO_LIMIT,
        JOBSNAP_REDIS_URL: '',
        JOBSNAP_TRUST_PROXY: '',
        // The bench stops servers with SIGTERM and wants them gone, not draining for a load balancer.
        JOBSNAP_DRAIN_MS: '0',
        ...extraEnv,
      },
    },
  )
  if (typeof stdout === 'number') closeSync(stdout)
  // A file made here goes when the server does.
  if (stdoutFile === undefined && logFile !== undefined) {
    const remove = () => rmSync(logFile, { force: true })
    void child.exited.then(remove)
    process.once('exit', remove)
  }
  // /ready, not /health: the port opens (and /health answers) before the snapshot has loaded.
  let readyMs = await waitForHttp(child, port, '/ready', { timeoutMs: readyTimeoutMs })
  if (workers > 1) {
    // /health answers as soon as one worker listens; ready means all of them.
    const deadline = performance.now() + readyTimeoutMs
    while (clusterFacts({ child, logFile }) === undefined && performance.now() < deadline && child.isRunning())
      await new Promise((resolve) => setTimeout(resolve, 20))
    readyMs = performance.now() - child.startedAt
  }
  const rerunPid = rerunOf(child.pid)
  return {
    name: child.name,
    port,
    child,
    readyMs,
    ...(rerunPid !== undefined ? { rerunPid } : {}),
    ...(logFile !== undefined ? { logFile } : {}),
  }
}

/** From a clustered jobsnap's log: the slowest worker's ready time and the RSS of all its processes when ready. */
export function clusterFacts(
  server: Pick<RunningServer, 'child' | 'logFile'>,
): { readyMsMax: number; rssMbTotal: number } | undefined {
  const line = /\{[^\n]*"message":"jobsnap listening[^\n]*\}/.exec(serverOutput(server))?.[0]
  if (!line) return undefined
  const fields = JSON.parse(line) as { ready_ms_max: number; rss_mb_total: number }
  return { readyMsMax: fields.ready_ms_max, rssMbTotal: fields.rss_mb_total }
}

/**
 * A running jobsnap's memory as the targets count it: per process (the
 * primary first, then each worker) its own memory, RSS minus the file pages
 * it maps (smapsOf), and a total that counts shared pages once: every
 * process's own memory, the largest file-mapped share (the same binary and
 * libraries in each), and what the page cache holds of the snapshot's
 * packed body files and search postings (util-linux `fincore`; their whole
 * size without it: a large snapshot reads them by position), once for every process.
 */
export function memoryFigures(
  server: RunningServer,
  distDir: string,
): {
  processes: { role: string; rssMb: number; ownMb: number; fileMb: number }[]
  pageCacheMb: number
  totalMb: number
} {
  const workerPids = [...serverOutput(server).matchAll(/\{[^\n]*"message":"worker ready"[^\n]*\}/g)].map(
    (match) => (JSON.parse(match[0]) as { pid: number }).pid,
  )
  const serving = server.rerunPid ?? server.child.pid
  // The launcher, when there is one, counts too: it is part of what an operator runs.
  const roles: [string, number][] = [
    ...(server.rerunPid !== undefined ? [['launcher', server.child.pid] as [string, number]] : []),
    [workerPids.length === 0 ? 'server' : 'primary', serving],
    ...workerPids.map((pid): [string, number] => ['worker', pid]),
  ]
  const processes = roles.map(([role, pid]) => ({
    role,
    ...(smapsOf(pid) ?? { rssMb: Number.NaN, ownMb: Number.NaN, fileMb: Number.NaN }),
  }))
  const files = packedFiles(distDir)
  // What the page cache holds of them now (util-linux fincore), else their whole size.
  const fincore = spawnSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', ...files], { encoding: 'utf8' })
  const resident = fincore.status === 0 ? fincore.stdout.split('\n').filter((line) => line.trim() !== '') : []
  const pageCacheMb =
    (resident.length === files.length
      ? resident.reduce((sum, line) => sum + Number(line.trim()), 0)
      : files.reduce((sum, file) => sum + statSync(file).size, 0)) /
    2 ** 20
  const own = processes.reduce((sum, p) => sum + p.ownMb, 0)
  const file = Math.max(...processes.map((p) => p.fileMb))
  return { processes, pageCacheMb, totalMb: own + file + pageCacheMb }
}

/** The current snapshot's packed body files and search postings: what a large snapshot reads by position. */
function packedFiles(distDir: string): string[] {
  const current = path.join(distDir, 'current')
  return [snapshotPaths.v2Bodies.bodies, snapshotPaths.v1Bodies.bodies, snapshotPaths.searchPostings]
    .map((file) => path.join(current, file))
    .filter((file) => existsSync(file))
}

/**
 * Drops the packed files from the page cache (GNU `dd iflag=nocache`; clean
 * pages only, which these are), so that memoryFigures' page-cache share,
 * counted just after a start, is what that start read: measured after the
 * bench warmed the page cache, it would be every byte of them, whatever the
 * server touched.
 */
export function evictPackedFiles(distDir: string): void {
  for (const file of packedFiles(distDir)) {
    const dd = spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none'], { encoding: 'utf8' })
    if (dd.status !== 0) throw new Error(`could not evict ${file} from the page cache: ${dd.stderr}`)
  }
}

/** Reads the packed files once, so the page cache holds them again for the load that follows; their bytes. */
export function warmPackedFiles(distDir: string): number {
  let bytes = 0
  for (const file of packedFiles(distDir)) {
    const cat = spawnSync('cat', [file], { stdio: ['ignore', 'ignore', 'pipe'] })
    if (cat.status !== 0) throw new Error(`could not read ${file}: ${cat.stderr}`)
    bytes += statSync(file).size
  }
  return bytes
}

/** memoryFigures in one line. */
export function describeMemory(figures: ReturnType<typeof memoryFigures>): string {
  const each = figures.processes
    .map(
      (p) => `${p.role} RSS ${p.rssMb.toFixed(0)} MB (own ${p.ownMb.toFixed(0)}, file-mapped ${p.fileMb.toFixed(0)})`,
    )
    .join('; ')
  return `${each}; total counting shared pages once ${figures.totalMb.toFixed(0)} MB (own memory of each, the largest file-mapped share, and the ${figures.pageCacheMb.toFixed(0)} MB of the packed body files and search postings the page cache holds, by fincore)`
}

/** The floor references: bench/bare-server.ts on bare node:http or h3, returning `file`'s bytes to every request. */
const BARE_NAMES = { node: 'bare node:http', h3: 'bare h3', 'node-headers': "bare node:http, jobsnap's headers" }

/** bench/bare-server.ts; `headersFile` (a JSON list of [name, value] pairs) for `node-headers`. */
export async function startBareServer(
  repoDir: string,
  kind: keyof typeof BARE_NAMES,
  file: string,
  headersFile?: string,
): Promise<RunningServer> {
  const port = await freePort()
  const child = startChild(
    `bare ${kind}`,
    process.execPath,
    ['--import', 'tsx', 'bench/bare-server.ts', kind, String(port), file, ...(headersFile ? [headersFile] : [])],
    { cwd: repoDir, env: { ...process.env, NODE_ENV: 'production' } },
  )
  const readyMs = await waitForHttp(child, port, '/health', { timeoutMs: 30_000 })
  return { name: BARE_NAMES[kind], port, child, readyMs }
}

export function rssOf(server: RunningServer): ReturnType<typeof memoryOf> {
  return memoryOf(server.rerunPid ?? server.child.pid)
}

// ---------- nginx ----------

const NGINX_INSTALL =
  'apt-get install -y nginx-light   (Debian/Ubuntu; any nginx binary on PATH or at /usr/sbin/nginx works)'

/** `JOBSNAP_BENCH_NGINX=/path/to/nginx` picks the binary (a path that does not exist: run without nginx). */
function findNginx(): string | undefined {
  const chosen = process.env.JOBSNAP_BENCH_NGINX
  if (chosen) return existsSync(chosen) ? chosen : undefined
  for (const candidate of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/bin/nginx', '/usr/bin/nginx'])
    if (existsSync(candidate)) return candidate
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const candidate = path.join(dir, 'nginx')
    if (dir && existsSync(candidate)) return candidate
  }
  return undefined
}

/**
 * nginx with a config written for this run: one worker, no access log
 * (unless `accessLog` names a file: then one JSON line per request with the
 * fields of jobsnap's access line, buffered 64 KiB as jobsnap's are),
 * keep-alive without a request cap, `/api/v2/jobs/<slug>` ->
 * `<snapshot>/v2/jobs/<slug>.json` and `/api/v1?page=N` ->
 * `<snapshot>/v1/25/N.json`, everything as application/json. `name` keeps
 * two instances' files apart.
 */
export async function startNginx(
  snapshotDir: string,
  workDir: string,
  options: { accessLog?: string; name?: string } = {},
): Promise<Optional<RunningServer>> {
  const binary = findNginx()
  if (!binary) return { ok: false, reason: `nginx not found; install it with: ${NGINX_INSTALL}` }
  const port = await freePort()
  const name = options.name ?? 'nginx'
  const dir = path.join(workDir, name)
  mkdirSync(dir, { recursive: true })
  const p = (name: string) => path.join(dir, name)
  const asRoot = process.getuid?.() === 0
  const config = `# Written by bench/run.ts for one run; deleted afterwards.
${asRoot ? 'user root;\n' : ''}worker_processes 1;
daemon off;
master_process on;
pid ${p('nginx.pid')};
error_log ${p('error.log')} warn;
events { worker_connections 1024; }
http {
  log_format jobsnap_like escape=json '{"time":"$time_iso8601","method":"$request_method","path":"$request_uri","status":$status,"bytes":$bytes_sent,"duration_s":$request_time,"client":"$remote_addr","request_id":"$request_id","message":"request"}';
  ${options.accessLog ? `access_log ${options.accessLog} jobsnap_like buffer=64k flush=250ms;` : 'access_log off;'}
  types { }
  default_type application/json;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 65;
  keepalive_requests 100000000;
  etag on;
  client_body_temp_path ${p('body')};
  proxy_temp_path ${p('proxy')};
  fastcgi_temp_path ${p('fastcgi')};
  uwsgi_temp_path ${p('uwsgi')};
  scgi_temp_path ${p('scgi')};
  map $arg_page $v1_page {
    "~^0*([1-9][0-9]*)$" $1;
    default 1;
  }
  server {
    listen ${LOOPBACK}:${port};
    root ${snapshotDir};
    location = /health { return 200 '{"status":"ok"}'; }
    location = /api/v1 { try_files /v1/25/$v1_page.json =404; }
    location ~ "^/api/v2/jobs/(?<slug>[a-z0-9-]+)$" {
      # Job files in layers (core/job-layers.ts): a whiteout, then the snapshot's own, then its base's.
      if (-f $document_root/v2/gone/$slug) { return 404; }
      try_files /v2/jobs/$slug.json /v2/base/$slug.json =404;
    }
    location / { return 404 '{"error":{"code":404}}'; }
  }
}
`
  writeFileSync(p('nginx.conf'), config)
  // `nginx -v` prints "nginx version: nginx/1.22.1" on stderr.
  const versionRun = spawnSync(binary, ['-v'], { encoding: 'utf8' })
  const version =
    `${versionRun.stderr ?? ''}${versionRun.stdout ?? ''}`.trim().replace(/^nginx version: /, '') || 'nginx'
  const child = startChild(name, binary, ['-p', dir, '-c', p('nginx.conf'), '-e', p('error.log')])
  try {
    const readyMs = await waitForHttp(child, port, '/health', { timeoutMs: 10_000 })
    return { ok: true, server: { name, port, child, readyMs, version } }
  } catch (error) {
    const log = existsSync(p('error.log')) ? readFileSync(p('error.log'), 'utf8').slice(-2000) : ''
    return { ok: false, reason: `nginx did not start: ${(error as Error).message}\n${log}` }
  }
}

// ---------- json-server ----------

const JSON_SERVER_INSTALL = 'npm i -D json-server@0.17.4   (a devDependency: `npm ci` installs it)'

function findJsonServer(repoDir: string): { bin: string; version: string } | undefined {
  try {
    const require = createRequire(path.join(repoDir, 'package.json'))
    const pkgFile = require.resolve('json-server/package.json')
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { version: string; bin: string | Record<string, string> }
    const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin['json-server']
    if (!bin) return undefined
    return { bin: path.resolve(path.dirname(pkgFile), bin), version: pkg.version }
  } catch {
    return undefined
  }
}

/**
 * json-server's database: `{"jobs": [...]}` with every v2 job of the
 * snapshot, the exact bytes of v2/jobs/<slug>.json. Written once per
 * snapshot (`.bench/json-server-<key>-<snapshot id>.json`).
 */
export function jsonServerDb(
  benchDir: string,
  key: string,
  snapshotDir: string,
  snapshotId: string,
  slugs: string[],
): string {
  const file = path.join(benchDir, `json-server-${key}-${snapshotId}.json`)
  if (existsSync(file)) return file
  for (const name of readdirSync(benchDir))
    if (name.startsWith(`json-server-${key}-`)) rmSync(path.join(benchDir, name), { force: true })
  const temp = `${file}.${process.pid}.tmp`
  const fd = openSync(temp, 'w')
  try {
    writeSync(fd, '{"jobs":[\n')
    slugs.forEach((slug, i) => {
      const bytes = readFileSync(jobFileOnDisk(snapshotDir, snapshotPaths.v2Job(slug))!)
      if (i > 0) writeSync(fd, ',\n')
      writeSync(fd, bytes)
    })
    writeSync(fd, '\n]}\n')
  } finally {
    closeSync(fd)
  }
  renameSync(temp, file)
  return file
}

export async function startJsonServer(
  repoDir: string,
  dbFile: string,
  workDir: string,
): Promise<Optional<RunningServer>> {
  const found = findJsonServer(repoDir)
  if (!found) return { ok: false, reason: `json-server not found; install it with: ${JSON_SERVER_INSTALL}` }
  if (!found.version.startsWith('0.17.')) {
    return {
      ok: false,
      reason: `json-server ${found.version} found; the bench speaks the 0.17 query dialect (_page/_limit, _gte/_lte); install it with: ${JSON_SERVER_INSTALL}`,
    }
  }
  const port = await freePort()
  const cwd = path.join(workDir, 'json-server')
  mkdirSync(cwd, { recursive: true })
  // Its own folder as cwd: no stray json-server.json config or public/ folder is picked up.
  const child = startChild(
    'json-server',
    process.execPath,
    [
      '--max-old-space-size=8192',
      found.bin,
      dbFile,
      '--host',
      LOOPBACK,
      '--port',
      String(port),
      '--read-only',
      '--quiet',
      '--no-gzip',
    ],
    { cwd, env: { ...process.env, NODE_ENV: 'production' } },
  )
  try {
    // Any HTTP answer means it is up (a probe of the jobs route would scan them all).
    const readyMs = await waitForHttp(child, port, '/__bench_ready', {
      timeoutMs: 300_000,
      accept: (status) => status < 500,
    })
    return { ok: true, server: { name: 'json-server', port, child, readyMs, version: `json-server ${found.version}` } }
  } catch (error) {
    return { ok: false, reason: `json-server did not start: ${(error as Error).message}` }
  }
}

/** What the server has written: its log file, else the tail of its output that `child` keeps. */
function serverOutput(server: Pick<RunningServer, 'child' | 'logFile'>): string {
  if (server.logFile === undefined) return server.child.output()
  try {
    return readFileSync(server.logFile, 'utf8')
  } catch {
    return ''
  }
}

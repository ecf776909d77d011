/**
 * What every hostile request is checked for: an answer (never a dropped
 * connection), never a 5xx, the JSON error body on errors, no stack-trace
 * text, nosniff, and none of the planted canaries or private snapshot data.
 * Checks return a list of problems so that thousands of payloads can be
 * tried and every failure reported at once.
 */
import { randomUUID } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { ConfigInput } from '../../../core/index.ts'
import type { RunningServer } from '../../../runtime/index.ts'
import { buildFixture, startFixtureServer, type FixtureSnapshot } from '../../support/fixtures.ts'
import { targetOf, type RawResponse, type Target } from '../../../support/raw-http.ts'

interface Canaries {
  /** Unique strings, one per planted file; none may ever appear in a response. */
  tokens: string[]
  files: string[]
}

/**
 * Plants files that must never be served: next to the dist folder, inside it,
 * beside and inside the snapshot (including a job-shaped file the index does
 * not know and a v1 page past the end), and in the dataset folder.
 */
async function plantCanaries(fixture: FixtureSnapshot): Promise<Canaries> {
  const snapshot = fixture.build.snapshotDir
  const files = [
    path.join(path.dirname(fixture.distDir), 'secret.txt'),
    path.join(fixture.distDir, 'secret.txt'),
    path.join(fixture.distDir, 'secret.json'),
    path.join(fixture.distDir, 'snapshots', 'secret.txt'),
    path.join(snapshot, 'secret.txt'),
    path.join(snapshot, 'secret.json'),
    path.join(snapshot, 'v2', 'secret.json'),
    path.join(snapshot, 'v2', 'jobs', 'planted-canary.json'),
    path.join(snapshot, 'v1', '25', '99999.json'),
    path.join(fixture.dataDir, 'secret.txt'),
  ]
  const tokens: string[] = []
  for (const file of files) {
    const token = `CANARY-${randomUUID()}`
    tokens.push(token)
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, JSON.stringify({ secret: token }))
  }
  return { tokens, files }
}

/** Strings only private files hold: index and manifest keys, unpublished dataset fields, HTML. */
const PRIVATE_MARKERS = ['"salary_order"', '"records_jobs"', '"total_raised":', '"description_html":', '<li>']
/** Files outside the project's data: /etc/passwd, package.json. */
const SYSTEM_MARKERS = [/^root:[^:\n]*:0:0:/m, /"devDependencies"\s*:/]

/** Stack-trace and internals text: frames, source positions, Node internals, error class names, local paths. */
const STACK_PATTERNS: RegExp[] = [
  /\n\s+at\s+\S/,
  /\bat\s+\S+\s+\([^)]*:\d+:\d+\)/,
  /\.(?:ts|js|mjs|cjs|mts):\d+/,
  /node:internal/,
  /node_modules/,
  /\b(?:Type|Range|Syntax|Reference|URI|Eval)Error\b/,
  new RegExp(process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
  /\/tmp\/jobsnap-/,
]

export interface CheckOptions {
  canaries: Canaries
  /** Error bodies in the JSON-RPC shape (/api/mcp) rather than the REST error body. */
  jsonRpc?: boolean
  /** A HEAD request: no body to check. */
  head?: boolean
}

/** Problems with the REST error body (docs/api.md: Errors; empty when it is right). */
function restErrorProblems(res: RawResponse): string[] {
  if (res.headers['content-type']?.startsWith('application/json') !== true)
    return [`error ${res.status} is not JSON (${res.headers['content-type']})`]
  let body: unknown
  try {
    body = JSON.parse(res.text)
  } catch {
    return [`error ${res.status} body does not parse: ${res.text.slice(0, 100)}`]
  }
  const error = (body as { error?: Record<string, unknown> }).error
  if (!error || typeof error !== 'object' || Object.keys(body as object).length !== 1)
    return [`error ${res.status} body is not {error}: ${res.text.slice(0, 100)}`]
  const problems: string[] = []
  if (error.code !== res.status) problems.push(`error.code ${String(error.code)} differs from status ${res.status}`)
  if (typeof error.message !== 'string' || error.message.length === 0) problems.push('error.message missing')
  for (const key of Object.keys(error))
    if (!['code', 'message', 'field'].includes(key)) problems.push(`unexpected error.${key}`)
  return problems
}

function jsonRpcErrorProblems(res: RawResponse): string[] {
  let body: unknown
  try {
    body = JSON.parse(res.text)
  } catch {
    return [`MCP error ${res.status} body does not parse: ${res.text.slice(0, 100)}`]
  }
  const message = body as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } }
  if (
    message.jsonrpc !== '2.0' ||
    typeof message.error?.code !== 'number' ||
    typeof message.error.message !== 'string'
  ) {
    return [`MCP error ${res.status} is not a JSON-RPC error: ${res.text.slice(0, 100)}`]
  }
  return []
}

/** Everything wrong with one answer to a hostile request; `where` names the request in the report. */
export function problemsOf(res: RawResponse, where: string, options: CheckOptions): string[] {
  const problems: string[] = []
  if (res.status === 0) return [`${where}: no answer (connection closed without a response)`]
  if (res.status >= 500) problems.push(`status ${res.status}`)
  if (res.headers['x-content-type-options'] !== 'nosniff') problems.push('no X-Content-Type-Options: nosniff')
  if (res.headers['x-powered-by'] !== undefined) problems.push(`X-Powered-By: ${res.headers['x-powered-by']}`)
  const text = res.raw.toString('utf8')
  for (const pattern of STACK_PATTERNS)
    if (pattern.test(res.text)) problems.push(`stack-trace or internals text ${pattern}`)
  for (const token of options.canaries.tokens) if (text.includes(token)) problems.push(`canary ${token} leaked`)
  for (const marker of PRIVATE_MARKERS) if (res.text.includes(marker)) problems.push(`private data ${marker} leaked`)
  for (const pattern of SYSTEM_MARKERS)
    if (pattern.test(res.text)) problems.push(`system file content ${pattern} leaked`)
  // /api/mcp answers in JSON-RPC; a path may normalise onto it, so its shape is recognised as well as asked for.
  const jsonRpc = options.jsonRpc ?? res.text.startsWith('{"jsonrpc":"2.0"')
  if (res.status >= 400 && !options.head)
    problems.push(...(jsonRpc ? jsonRpcErrorProblems(res) : restErrorProblems(res)))
  return problems.map((problem) => `${where} -> ${res.status}: ${problem}`)
}

/** True when a 200 body is one of the public documents (lists, a job, the index, health, OpenAPI, docs). */
export function isPublicDocument(res: RawResponse): boolean {
  const type = res.headers['content-type'] ?? ''
  if (type.startsWith('application/yaml')) return res.text.startsWith('openapi:')
  if (type.startsWith('text/')) return true // /docs and its assets: a fixed set of files from swagger-ui-dist
  let body: Record<string, unknown>
  try {
    body = JSON.parse(res.text) as Record<string, unknown>
  } catch {
    return false
  }
  return (
    (Array.isArray(body.data) && typeof body.total === 'number') ||
    (Array.isArray(body.jobs) && typeof body.usage === 'string') ||
    (body.name === 'jobsnap' && typeof body.endpoints === 'object') ||
    (body.status === 'ok' && typeof body.snapshot_id === 'string') ||
    (typeof body.slug === 'string' && typeof body.id === 'string' && typeof body.title === 'string')
  )
}

/** Counts shared by a test file, printed as its figure at the end. */
export class Tally {
  tried = 0
  fiveHundreds = 0
  readonly byStatus = new Map<number, number>()

  record(res: RawResponse): void {
    this.tried++
    if (res.status >= 500) this.fiveHundreds++
    this.byStatus.set(res.status, (this.byStatus.get(res.status) ?? 0) + 1)
  }

  summary(label: string): string {
    const statuses = [...this.byStatus]
      .sort((a, b) => a[0] - b[0])
      .map(([status, count]) => `${status}x${count}`)
      .join(' ')
    return `[security] ${label}: ${this.tried} requests, ${this.fiveHundreds} answered 5xx (${statuses})`
  }
}

export interface HostileSetup {
  fixture: FixtureSnapshot
  server: RunningServer
  target: Target
  canaries: Canaries
  close(): Promise<void>
}

/**
 * A small built snapshot with canaries planted, served on 127.0.0.1 with the
 * rate limits out of the way (the limit suite tests those) and a short
 * headers deadline, so a payload that leaves half a request on the wire is
 * answered 408 quickly instead of stalling the suite.
 */
export async function startHostileServer(overrides: ConfigInput = {}): Promise<HostileSetup> {
  const fixture = await buildFixture({ jobs: 200, companies: 30, seed: 11 })
  const canaries = await plantCanaries(fixture)
  const server = await startFixtureServer(fixture.distDir, {
    JOBSNAP_REST_LIMIT: 10_000_000,
    JOBSNAP_MCP_BURST: 10_000_000,
    JOBSNAP_MCP_RATE: 1_000_000,
    JOBSNAP_HEADERS_TIMEOUT_MS: 2_000,
    JOBSNAP_REQUEST_TIMEOUT_MS: 4_000,
    ...overrides,
  })
  return {
    fixture,
    server,
    target: targetOf(server.url),
    canaries,
    async close() {
      await server.close()
      await fixture.cleanup()
    },
  }
}

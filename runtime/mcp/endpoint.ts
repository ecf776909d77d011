/**
 * POST /api/mcp: the stateless streamable-HTTP endpoint, with the checks this
 * API puts in front of the SDK transport (which accepts batches and checks
 * none of them): Host on loopback, Origin, rate bucket, method, body size,
 * one JSON-RPC message per POST, a well-formed JSON-RPC 2.0 envelope (else
 * -32600 Invalid Request) and params of the shape its method takes (else
 * -32602 Invalid params), each error carrying the request's id when it could
 * be read.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { IncomingMessage } from 'node:http'
import ipaddr from 'ipaddr.js'
import { FastResponse } from 'srvx'
import type { Config } from '../../core/config.ts'
import { negotiateEncoding } from '../http/encoding.ts'
import { compressOnce } from '../http/payload.ts'
import { rateLimitHeaders, type TokenBucketLimiter } from '../http/rate-limit.ts'
import type { Limiter } from '../http/redis-limiter.ts'
import { withCommonHeaders, type HeaderList } from '../http/respond.ts'
import type { LoadedSnapshot } from '../snapshot/load.ts'
import { describeIssues } from '../../core/issue-wording.ts'
import { createMcpServer, invalidToolArguments, toolErrorResult } from './server.ts'

export const MCP_MAX_BODY_BYTES = 1024 * 1024
const ALLOW = 'POST, OPTIONS'

export interface McpDependencies {
  config: Config
  /** Undefined until the server's first snapshot has loaded (then answered 503). */
  snapshot: LoadedSnapshot | undefined
  /** Decides (in memory or in Redis). */
  limiter: Limiter
  /** The bucket's configured size and refill, for the RateLimit headers. */
  bucket: TokenBucketLimiter
  client: string
  now: number
}

type JsonRpcId = string | number | null

function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: HeaderList = [],
  id: JsonRpcId = null,
): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }), {
    status,
    headers: withCommonHeaders(
      [
        ['content-type', 'application/json; charset=utf-8'],
        ['cache-control', 'no-store'],
        ['x-cache', 'BYPASS'],
      ],
      headers,
    ),
  })
}

/** A JSON-RPC result, answered here rather than by the SDK. */
function jsonRpcResult(id: JsonRpcId, result: object, headers: HeaderList): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id, result }), {
    status: 200,
    headers: withCommonHeaders(
      [
        ['content-type', 'application/json; charset=utf-8'],
        ['cache-control', 'no-store'],
        ['x-cache', 'BYPASS'],
      ],
      headers,
    ),
  })
}

/** The ids MCP allows: a string or an integer (never null). */
function isRequestId(value: unknown): value is string | number {
  return typeof value === 'string' || Number.isSafeInteger(value)
}

/** The message's id when it is one a reply can carry, else null. */
function readableId(message: unknown): JsonRpcId {
  const id = message && typeof message === 'object' ? (message as { id?: unknown }).id : undefined
  return isRequestId(id) ? id : null
}

/** What makes `message` not a JSON-RPC 2.0 request, notification or response, or undefined when it is one. */
function envelopeProblem(message: Record<string, unknown>): string | undefined {
  if (message.jsonrpc !== '2.0') return '"jsonrpc" must be "2.0"'
  if ('method' in message) {
    if (typeof message.method !== 'string') return '"method" must be a string'
    if ('id' in message && !isRequestId(message.id))
      return '"id" must be a string or an integer that JSON numbers hold exactly (at most 2^53 - 1 either way)'
    const { params } = message
    if ('params' in message && (params === null || typeof params !== 'object' || Array.isArray(params)))
      return '"params" must be an object'
    return strayMembers(message, REQUEST_MEMBERS)
  }
  if (!isRequestId(message.id) || !('result' in message || 'error' in message))
    return 'expected a request (method and id), a notification (method) or a response (id and result or error)'
  if ('result' in message && 'error' in message) return 'a response carries "result" or "error", not both'
  return strayMembers(message, RESPONSE_MEMBERS)
}

const REQUEST_MEMBERS = ['jsonrpc', 'id', 'method', 'params']
const RESPONSE_MEMBERS = ['jsonrpc', 'id', 'result', 'error']

/** Members a JSON-RPC message of its kind does not have (a request with a "result", say), named. */
function strayMembers(message: Record<string, unknown>, allowed: readonly string[]): string | undefined {
  const stray = Object.keys(message).filter((key) => !allowed.includes(key))
  if (stray.length === 0) return undefined
  const kind = allowed === REQUEST_MEMBERS ? 'a request or notification' : 'a response'
  return `${kind} has only the members ${allowed.map((key) => `"${key}"`).join(', ')}; not ${stray.map((key) => JSON.stringify(key.slice(0, 100))).join(', ')}`
}

/** Where `value` has an own "__proto__" member (JSON.parse makes one; most copies of the object drop it). */
function protoMemberAt(value: unknown, at: string, depth = 0): string | undefined {
  if (value === null || typeof value !== 'object' || depth > 32) return undefined
  if (Object.hasOwn(value, '__proto__')) return at
  for (const [key, inner] of Object.entries(value)) {
    const found = protoMemberAt(inner, `${at}.${key}`, depth + 1)
    if (found) return found
  }
  return undefined
}

/** The params shape of each method this server answers; the SDK would report a mismatch as an internal error. */
const PARAMS_SCHEMAS = new Map(
  [
    InitializeRequestSchema,
    PingRequestSchema,
    ListToolsRequestSchema,
    CallToolRequestSchema,
    ListResourcesRequestSchema,
    ListResourceTemplatesRequestSchema,
    ReadResourceRequestSchema,
    ListPromptsRequestSchema,
    GetPromptRequestSchema,
    CompleteRequestSchema,
  ].map((schema) => [schema.shape.method.value, schema]),
)

/** The list methods: this server answers each on one page and issues no cursor, so any cursor is invalid. */
const LISTS = new Set(
  [
    ListToolsRequestSchema,
    ListResourcesRequestSchema,
    ListResourceTemplatesRequestSchema,
    ListPromptsRequestSchema,
  ].map((schema) => schema.shape.method.value as string),
)

/**
 * Why a request's params do not fit its method, in a sentence; undefined when they do (or the method is
 * unknown). `toolError`: the params are well formed and only a tool's arguments are not (a "__proto__"
 * argument), which is answered as a tool execution error, as the call handler answers any bad argument.
 */
function paramsProblem(message: Record<string, unknown>): { message: string; toolError?: true } | undefined {
  const cursor = (message.params as { cursor?: unknown } | undefined)?.cursor
  if (cursor !== undefined && LISTS.has(message.method as string))
    return {
      message: `Invalid params for ${message.method as string}: cursor ${JSON.stringify(cursor).slice(0, 100)} is not one this server issued (it lists everything on one page, with no nextCursor).`,
    }
  const schema = PARAMS_SCHEMAS.get(message.method as never)
  if (!schema) return undefined
  if (schema.safeParse(message).success) {
    // The SDK's parse drops a "__proto__" member, so no handler could refuse it as unknown.
    const at = protoMemberAt(message.params, 'params')
    if (!at) return undefined
    const params = message.params as { name?: unknown; arguments?: unknown }
    if (message.method === 'tools/call' && at.startsWith('params.arguments')) {
      // No problem with the arguments means no such tool: the call handler names the tools there are.
      const problem = invalidToolArguments(params.name, params.arguments)
      return problem ? { message: problem, toolError: true } : undefined
    }
    return {
      message: `Invalid params for ${message.method as string}: "__proto__" (in ${at}) is not a name this server takes.`,
    }
  }
  const issues = schema.safeParse(message, { reportInput: true }).error?.issues ?? []
  return { message: `Invalid params for ${message.method as string}: ${describeIssues(issues, 'params').join('; ')}` }
}

/** True when the SDK transport would take this POST's headers (it answers 406 or 415 otherwise). */
function transportAccepts(request: Request): boolean {
  const accept = request.headers.get('accept') ?? ''
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  return accept.includes('application/json') && accept.includes('text/event-stream') && type === 'application/json'
}

/**
 * A Host name that can only mean this machine: `localhost` (also as `localhost.`), any address in
 * 127.0.0.0/8 written as four decimal parts, or `[::1]`. A rebinding attacker's own name is none of these.
 */
function isLoopbackHostName(name: string): boolean {
  const host = name.toLowerCase().replace(/\.$/, '')
  if (host === 'localhost') return true
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return ipaddr.IPv4.parse(host).range() === 'loopback'
  const inner = /^\[(.*)\]$/.exec(host)?.[1]
  return inner !== undefined && ipaddr.IPv6.isValid(inner) && ipaddr.IPv6.parse(inner).range() === 'loopback'
}

function isLoopbackBind(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.')
}

/**
 * The Host header's name without port: "127.0.0.1:3000" -> "127.0.0.1", "[::1]:80" -> "[::1]".
 * Anything else after the name ("[::1].evil", "localhost:80:x") is not a Host at all: "".
 */
function hostName(hostHeader: string | null): string {
  if (!hostHeader) return ''
  return /^(\[[^\]]*\]|[^:[\]]*)(?::\d*)?$/.exec(hostHeader)?.[1] ?? ''
}

/**
 * Reads at most `limit` bytes; undefined when the body is larger (the rest
 * is left unread). Straight from Node's stream when
 * there is one: wrapping it as a web ReadableStream cost ~40 us a call.
 */
async function readBodyCapped(request: Request, limit: number): Promise<Buffer | undefined> {
  const node = (request as Request & { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req
  if (node) return readNodeBodyCapped(node, limit)
  if (!request.body) return Buffer.alloc(0)
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

function readNodeBodyCapped(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  if (request.readableEnded) return Promise.resolve(Buffer.alloc(0))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) return void chunks.push(chunk)
      // Not destroyed: that would reset the connection before the 413 is read. Node discards the
      // rest of the body once the response is sent (and the 413 closes the connection).
      request.off('data', onData)
      request.pause()
      resolve(undefined)
    }
    request.on('data', onData)
    request.once('end', () => resolve(Buffer.concat(chunks, size)))
    request.once('error', reject)
    request.once('close', () => resolve(size > limit ? undefined : Buffer.concat(chunks, size)))
  })
}

const NOT_JSON = Symbol('not JSON')

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'))
  } catch {
    return NOT_JSON
  }
}

/** The answer while the server's first snapshot is still loading (a few seconds after start). */
function mcpNotReady(): Response {
  return jsonRpcError(
    503,
    -32000,
    'The server is starting: its first snapshot is still loading. Retry in a few seconds.',
    [['retry-after', '2']],
  )
}

export async function handleMcpRequest(request: Request, deps: McpDependencies): Promise<Response> {
  const response = await answerMcpRequest(request, deps)
  const origins = deps.config.JOBSNAP_MCP_ORIGINS
  if (origins.includes('*')) return response
  // With an allow-list, CORS names the allowed Origin it answers (never `*`), and no refused one.
  const origin = request.headers.get('origin')
  if (origin !== null && origins.includes(origin)) {
    response.headers.set('access-control-allow-origin', origin)
    response.headers.append('vary', 'Origin')
  } else response.headers.delete('access-control-allow-origin')
  return response
}

async function answerMcpRequest(request: Request, deps: McpDependencies): Promise<Response> {
  const { config } = deps
  if (isLoopbackBind(config.HOST) && !isLoopbackHostName(hostName(request.headers.get('host')))) {
    return jsonRpcError(403, -32000, 'Forbidden: this server listens on loopback and only answers loopback Host names.')
  }
  const origin = request.headers.get('origin')
  if (origin !== null && !config.JOBSNAP_MCP_ORIGINS.includes('*') && !config.JOBSNAP_MCP_ORIGINS.includes(origin)) {
    return jsonRpcError(403, -32000, `Forbidden: origin ${origin.slice(0, 100)} is not allowed.`)
  }
  const windowSeconds = Math.round(deps.bucket.burst / deps.bucket.ratePerSecond)
  if (request.method === 'OPTIONS') {
    // Not counted, but says where the client's bucket stands.
    const standing = await deps.limiter.peek(deps.client, deps.now)
    return new Response(null, {
      status: 204,
      headers: withCommonHeaders(
        [
          ['access-control-allow-methods', ALLOW],
          ['access-control-allow-headers', 'content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id'],
          ['access-control-max-age', '86400'],
        ],
        rateLimitHeaders('mcp', standing, windowSeconds),
      ),
    })
  }

  const { snapshot } = deps
  if (!snapshot) return mcpNotReady()

  const decision = await deps.limiter.hit(deps.client, deps.now)
  const limitHeaders = rateLimitHeaders('mcp', decision, windowSeconds)
  if (!decision.allowed) {
    // The refused request's id, when its body can be read cheaply, so a client can tell which call was refused.
    const body = request.method === 'POST' ? await readBodyCapped(request, MCP_MAX_BODY_BYTES) : undefined
    return jsonRpcError(
      429,
      -32000,
      `Rate limit exceeded: burst ${decision.limit}, refilled at ${deps.bucket.ratePerSecond} per second. Retry in ${decision.resetSeconds} s.`,
      [...limitHeaders, ['retry-after', String(decision.resetSeconds)]],
      body ? readableId(parseJson(body)) : null,
    )
  }
  if (request.method !== 'POST') {
    return jsonRpcError(
      405,
      -32000,
      `Method ${request.method} is not allowed: this endpoint is stateless and takes one JSON-RPC message per POST.`,
      [...limitHeaders, ['allow', ALLOW]],
    )
  }
  const declared = Number(request.headers.get('content-length') ?? '0')
  if (declared > MCP_MAX_BODY_BYTES)
    return jsonRpcError(413, -32000, `Request body over ${MCP_MAX_BODY_BYTES} bytes.`, limitHeaders)
  const raw = await readBodyCapped(request, MCP_MAX_BODY_BYTES)
  if (!raw)
    return jsonRpcError(413, -32000, `Request body over ${MCP_MAX_BODY_BYTES} bytes.`, [
      ...limitHeaders,
      ['connection', 'close'],
    ])
  const message = parseJson(raw)
  if (message === NOT_JSON) return jsonRpcError(400, -32700, 'Parse error: the body is not valid JSON.', limitHeaders)
  if (Array.isArray(message)) {
    return jsonRpcError(
      400,
      -32600,
      'Invalid request: JSON-RPC batches are not supported; send one message per POST.',
      limitHeaders,
    )
  }
  if (message === null || typeof message !== 'object') {
    return jsonRpcError(400, -32600, 'Invalid request: expected one JSON-RPC message object.', limitHeaders)
  }
  // The transport's HTTP checks (406 for an Accept without both JSON and SSE, 415 for a body not
  // labelled JSON) come before the message's own: such requests go to it as they are.
  if (transportAccepts(request)) {
    const envelope = message as Record<string, unknown>
    const problem = envelopeProblem(envelope)
    if (problem) return jsonRpcError(400, -32600, `Invalid request: ${problem}.`, limitHeaders, readableId(envelope))
    const badParams = 'id' in envelope ? paramsProblem(envelope) : undefined
    if (badParams?.toolError)
      return jsonRpcResult(readableId(envelope), toolErrorResult(badParams.message), limitHeaders)
    if (badParams) return jsonRpcError(200, -32602, badParams.message, limitHeaders, readableId(envelope))
  }

  // A server and transport per POST (stateless): nothing outlives the response, so they are left to
  // the garbage collector. server.close() would only build a "Connection closed" McpError with a
  // stack trace for the SDK to discard (~80 us a call).
  const server = createMcpServer(snapshot, deps.now)
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  })
  await server.connect(transport)
  const response = await transport.handleRequest(request, { parsedBody: message })
  const headers: HeaderList = []
  response.headers.forEach((value, name) => {
    if (!OVERRIDDEN.has(name)) headers.push([name, value])
  })
  let body: Buffer | null = response.body ? Buffer.from(await response.arrayBuffer()) : null
  if (body && response.status >= 400) body = withRequestId(body, readableId(message))
  // Compressed as REST bodies are (a 25-job search_jobs answer is ~23 KB of JSON, ~4 KB in brotli).
  const encoding = body ? negotiateEncoding(request.headers.get('accept-encoding')) : undefined
  const encoded = body && encoding ? await compressOnce(body, encoding) : undefined
  if (encoded) {
    body = encoded
    headers.push(['content-encoding', encoding!])
  }
  if (body) headers.push(['vary', 'Accept-Encoding'])
  return new FastResponse(body, {
    status: response.status,
    headers: withCommonHeaders(headers, limitHeaders, [
      ['cache-control', 'no-store'],
      ['x-cache', 'BYPASS'],
    ]),
  })
}

/**
 * The transport's own HTTP errors (406 for an Accept it does not take, 415
 * for a body not labelled JSON) carry `id: null` even when the message's id
 * was readable; a client matches replies by id, so it is filled in.
 */
function withRequestId(body: Buffer, id: JsonRpcId): Buffer {
  if (id === null) return body
  const reply = parseJson(body)
  if (reply === NOT_JSON || reply === null || typeof reply !== 'object' || Array.isArray(reply)) return body
  const envelope = reply as Record<string, unknown>
  if (envelope.id !== null || !('error' in envelope)) return body
  return Buffer.from(JSON.stringify({ ...envelope, id }))
}

/** Headers the SDK may set that this endpoint sets itself. */
const OVERRIDDEN = new Set([
  'cache-control',
  'content-encoding',
  'content-length',
  'vary',
  'x-cache',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'x-content-type-options',
])

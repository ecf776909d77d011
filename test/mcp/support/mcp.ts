/**
 * What the MCP suites share: an SDK `Client` over `StreamableHTTPClientTransport`
 * whose output-schema validation is observed (so a test knows the client really
 * checked each structuredContent against the tool's published outputSchema),
 * raw POSTs for the transport rules, node:http for what fetch() will not send
 * (a Host header, a chunked body), and the v2 list and dataset as oracles.
 */
import { readFile } from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { type CallToolResult, ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js'
import { expect } from 'vitest'
import type { DatasetCompany, DatasetJob, V2Job, V2ListResponse } from '../../../core/index.ts'

export type { V2Job, V2ListResponse }

export const TOOL_NAMES = [
  'search_jobs',
  'get_job',
  'search_companies',
  'get_company',
  'get_market_stats',
  'list_filters',
  'get_salary_benchmarks',
  'explain_schedule_type',
] as const
export type ToolName = (typeof TOOL_NAMES)[number]

/** The headers a streamable-HTTP client sends with every POST. */
export const POST_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
} as const

// ---------- SDK client with observed output validation ----------

interface ValidationCheck {
  schema: JsonSchemaType
  valid: boolean
  errorMessage: string | undefined
}

/**
 * The SDK's own Ajv validator, wrapped so every check the Client makes is
 * recorded. The Client compiles one validator per listed tool (after
 * tools/list) and runs it on each structuredContent it receives.
 */
class RecordingValidator implements jsonSchemaValidator {
  private readonly inner = new AjvJsonSchemaValidator()
  readonly checks: ValidationCheck[] = []
  readonly compiled = new Map<JsonSchemaType, JsonSchemaValidator<unknown>>()

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const validate = this.inner.getValidator<T>(schema)
    this.compiled.set(schema, validate)
    return (input: unknown) => {
      const result = validate(input)
      this.checks.push({ schema, valid: result.valid, errorMessage: result.errorMessage })
      return result
    }
  }
}

export interface McpSession {
  client: Client
  transport: StreamableHTTPClientTransport
  validator: RecordingValidator
  /** tools/list, by name (listing them also arms the Client's output validation). */
  tools: Map<string, Tool>
  close(): Promise<void>
}

export async function connectMcp(baseUrl: string, clientName = 'jobsnap-test'): Promise<McpSession> {
  const validator = new RecordingValidator()
  const client = new Client({ name: clientName, version: '1.0.0' }, { jsonSchemaValidator: validator })
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp`))
  await client.connect(transport)
  const { tools } = await client.listTools()
  return {
    client,
    transport,
    validator,
    tools: new Map(tools.map((tool) => [tool.name, tool])),
    close: () => client.close(),
  }
}

function textOf(result: CallToolResult): string {
  const texts = result.content.filter((part) => part.type === 'text').map((part) => part.text)
  return texts.join('\n')
}

async function call(session: McpSession, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = await session.client.callTool({ name, arguments: args })
  // The SDK types callTool's answer as CallToolResult or the pre-2024-11 `toolResult` shape.
  expect(result, 'a CallToolResult, not the legacy toolResult shape').toHaveProperty('content')
  return result as CallToolResult
}

export interface ToolSuccess<T> {
  structured: T
  text: string
  result: CallToolResult
}

/**
 * Calls a tool that must succeed: not isError, a non-empty text content, and a
 * structuredContent the Client itself validated against the listed outputSchema.
 */
export async function callOk<T>(
  session: McpSession,
  name: ToolName,
  args: Record<string, unknown> = {},
): Promise<ToolSuccess<T>> {
  const before = session.validator.checks.length
  const result = await call(session, name, args)
  const text = textOf(result)
  expect(result.isError ?? false, `${name}(${JSON.stringify(args)}) failed: ${text}`).toBe(false)
  expect(text.trim().length, `${name} returns a non-empty text content`).toBeGreaterThan(0)
  expect(result.structuredContent, `${name} returns structuredContent`).toBeTypeOf('object')
  const checks = session.validator.checks.slice(before)
  expect(checks, `the Client validated ${name}'s structuredContent exactly once`).toHaveLength(1)
  expect(checks[0]!.schema, `against ${name}'s listed outputSchema`).toBe(session.tools.get(name)?.outputSchema)
  expect(checks[0]!.valid, checks[0]!.errorMessage).toBe(true)
  // The text block is the structured result itself, serialized, for clients that read only text.
  expect(JSON.parse(text), `${name}'s text block is its structuredContent as JSON`).toEqual(result.structuredContent)
  return { structured: result.structuredContent as T, text, result }
}

/**
 * Calls a tool with arguments its schema refuses (wrong type, unknown
 * argument, a value outside a closed vocabulary): a tool execution error (a
 * result with isError, no structuredContent) whose text says what is
 * allowed, never a JSON-RPC error, so the model sees it and can retry.
 * Returns its text.
 */
export async function callInvalid(session: McpSession, name: ToolName, args: unknown): Promise<string> {
  const result = await session.client
    .callTool({ name, arguments: args as Record<string, unknown> })
    .catch((caught: unknown) => {
      throw new Error(`${name}(${JSON.stringify(args)}) answered a protocol error, not a tool error: ${String(caught)}`)
    })
  expect(result, 'a CallToolResult').toHaveProperty('content')
  const text = textOf(result as CallToolResult)
  expect(result.isError, `${name}(${JSON.stringify(args)}) should be a tool error, got: ${text.slice(0, 300)}`).toBe(
    true,
  )
  expect(result.structuredContent).toBeUndefined()
  expect(text).toMatch(new RegExp(`^Invalid arguments for ${name}: `))
  return text
}

/**
 * Calls a tool that does not exist: a JSON-RPC -32602 Invalid params error
 * (a protocol error, not a tool result). Returns its message.
 */
export async function callUnknownTool(
  session: McpSession,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const error = await session.client
    .callTool({ name, arguments: args })
    .then((result) => {
      throw new Error(`${name}(${JSON.stringify(args)}) answered a result, not -32602: ${JSON.stringify(result)}`)
    })
    .catch((caught: unknown) => caught)
  expect(error, `${name}(${JSON.stringify(args)})`).toBeInstanceOf(McpError)
  expect((error as McpError).code, (error as McpError).message).toBe(ErrorCode.InvalidParams)
  return (error as McpError).message
}

/** Calls a tool that must fail as a tool result (isError), not as a protocol error; returns its text. */
export async function callError(session: McpSession, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await call(session, name, args)
  const text = textOf(result)
  expect(result.isError, `${name}(${JSON.stringify(args)}) should be a tool error, got: ${text.slice(0, 300)}`).toBe(
    true,
  )
  expect(result.structuredContent).toBeUndefined()
  expect(text.trim().length).toBeGreaterThan(0)
  return text
}

// ---------- raw HTTP ----------

export interface RawResponse {
  status: number
  headers: Headers
  text: string
}

/** One POST to /api/mcp with fetch; `body` is sent as is when a string, else as JSON. */
export async function postMcp(
  baseUrl: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const response = await fetch(`${baseUrl}/api/mcp`, {
    method: 'POST',
    headers: { ...POST_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

export interface NodeResponse {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
}

/**
 * A request with node:http, which (unlike fetch) sends the Host header it is
 * given and streams a body in chunks when no Content-Length is set. The
 * server may answer before reading all of a large body; the answer wins.
 * `localAddress` picks the client's source address (another loopback
 * address is another client to the rate limiter).
 */
export function nodeRequest(
  url: string,
  options: {
    method?: string
    headers?: Record<string, string>
    body?: string | Buffer
    chunks?: Buffer[]
    localAddress?: string
  } = {},
): Promise<NodeResponse> {
  return new Promise((resolve, reject) => {
    let answered = false
    const req = http.request(
      url,
      { method: options.method ?? 'POST', headers: options.headers, agent: false, localAddress: options.localAddress },
      (res) => {
        answered = true
        const parts: Buffer[] = []
        res.on('data', (chunk: Buffer) => parts.push(chunk))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }),
        )
        res.on('error', reject)
      },
    )
    req.on('error', (error) => {
      if (!answered) reject(error)
    })
    if (options.chunks) {
      for (const chunk of options.chunks) req.write(chunk)
      req.end()
    } else {
      req.end(options.body)
    }
  })
}

export interface JsonRpcErrorBody {
  jsonrpc: '2.0'
  id: string | number | null
  error: { code: number; message: string }
}

/** Asserts a JSON-RPC error body and returns it. */
export function expectJsonRpcError(text: string, code?: number): JsonRpcErrorBody {
  const body = JSON.parse(text) as JsonRpcErrorBody
  expect(body.jsonrpc).toBe('2.0')
  expect(body).not.toHaveProperty('result')
  expect(body.error.code).toBeTypeOf('number')
  if (code !== undefined) expect(body.error.code).toBe(code)
  expect(body.error.message.length).toBeGreaterThan(0)
  return body
}

/** A tools/list request (valid without initialize on a stateless server). */
export const toolsListMessage = (id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'tools/list' })

export const initializeMessage = (id: number | string = 1, protocolVersion = '2025-11-25') => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-test', version: '1.0.0' } },
})

// ---------- oracles ----------

/** Every job a v2 query matches, paging with limit=100 until has_more is false. */
export async function allV2Jobs(
  baseUrl: string,
  filter: Record<string, string> = {},
): Promise<{ jobs: V2Job[]; total: number }> {
  const jobs: V2Job[] = []
  let total = -1
  for (let page = 1; page < 1000; page++) {
    const params = new URLSearchParams({ ...filter, page: String(page), limit: '100' })
    const response = await fetch(`${baseUrl}/api/v2/jobs?${params}`)
    expect(response.status, `GET /api/v2/jobs?${params}`).toBe(200)
    const body = (await response.json()) as V2ListResponse
    total = body.total
    jobs.push(...body.data)
    if (!body.has_more) return { jobs, total }
  }
  throw new Error('runaway paging')
}

export async function getV2Job(baseUrl: string, slug: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}/api/v2/jobs/${encodeURIComponent(slug)}`)
  return { status: response.status, body: await response.json() }
}

async function readNdjson<T>(file: string): Promise<T[]> {
  const text = await readFile(file, 'utf8')
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T)
}

/** The data team's records, as written to the fixture's data folder (before the build). */
export async function readDataset(dataDir: string): Promise<{ companies: DatasetCompany[]; jobs: DatasetJob[] }> {
  return {
    companies: await readNdjson<DatasetCompany>(path.join(dataDir, 'companies.ndjson')),
    jobs: await readNdjson<DatasetJob>(path.join(dataDir, 'jobs.ndjson')),
  }
}

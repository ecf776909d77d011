/**
 * MCP answers compressed on request, as REST bodies are: the SDK's own Client
 * sending `Accept-Encoding: gzip, br` (its fetch decodes what it is sent), and
 * node:http, which decodes nothing, so the bytes on the wire and their
 * Content-Encoding are checked against the same answer uncompressed.
 */
import http from 'node:http'
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { buildFixture, startFixtureServer, type FixtureSnapshot } from '../support/fixtures.ts'
import { POST_HEADERS } from './support/mcp.ts'

const gunzip = promisify(zlib.gunzip)
const brotliDecompress = promisify(zlib.brotliDecompress)

let fixture: FixtureSnapshot
let server: RunningServer

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 120, companies: 20, seed: 12 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_MCP_BURST: 100_000 })
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

interface RawAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  bytes: Buffer
}

/** One POST with node:http, which sends exactly the headers given and leaves the body as it came. */
function post(body: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${server.url}/api/mcp`,
      { method: 'POST', headers: { ...POST_HEADERS, ...headers }, agent: false },
      (response) => {
        const parts: Buffer[] = []
        response.on('data', (chunk: Buffer) => parts.push(chunk))
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, bytes: Buffer.concat(parts) }),
        )
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(JSON.stringify(body))
  })
}

const searchCall = {
  jsonrpc: '2.0',
  id: 5,
  method: 'tools/call',
  params: { name: 'search_jobs', arguments: {} },
}

describe('MCP answers and Accept-Encoding', () => {
  it.each([
    ['gzip, br', 'br', brotliDecompress],
    ['gzip', 'gzip', gunzip],
  ] as const)(
    'Accept-Encoding: %s -> Content-Encoding: %s, decoding to the identity body',
    async (accept, coding, decode) => {
      const plain = await post(searchCall)
      expect(plain.status).toBe(200)
      expect(plain.headers['content-encoding']).toBeUndefined()
      expect(plain.headers.vary).toMatch(/Accept-Encoding/i)
      expect(plain.bytes.length, 'a 25-job page is worth compressing').toBeGreaterThan(10_000)

      const packed = await post(searchCall, { 'accept-encoding': accept })
      expect(packed.status).toBe(200)
      expect(packed.headers['content-encoding']).toBe(coding)
      expect(packed.headers.vary).toMatch(/Accept-Encoding/i)
      expect(Number(packed.headers['content-length'])).toBe(packed.bytes.length)
      expect(packed.bytes.length).toBeLessThan(plain.bytes.length / 3)
      const decoded = await decode(packed.bytes)
      expect(JSON.parse(decoded.toString('utf8'))).toEqual(JSON.parse(plain.bytes.toString('utf8')))
    },
  )

  it('leaves a small answer, and a client that asks for none, uncompressed', async () => {
    const ping = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'accept-encoding': 'gzip, br' })
    expect(ping.headers['content-encoding']).toBeUndefined()
    expect(JSON.parse(ping.bytes.toString('utf8'))).toEqual({ jsonrpc: '2.0', id: 1, result: {} })
    const refused = await post(searchCall, { 'accept-encoding': 'br;q=0, gzip;q=0' })
    expect(refused.headers['content-encoding']).toBeUndefined()
  })

  it("is read by the SDK's Client that sends gzip, br: every answer compressed, every result intact", async () => {
    const encodings: (string | null)[] = []
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), {
      requestInit: { headers: { 'accept-encoding': 'gzip, br' } },
      fetch: async (url, init) => {
        const response = await fetch(url, init)
        encodings.push(response.headers.get('content-encoding'))
        return response
      },
    })
    const client = new Client({ name: 'compression-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const { tools } = await client.listTools()
      expect(tools.length).toBeGreaterThan(5)
      const result = (await client.callTool({ name: 'search_jobs', arguments: {} })) as CallToolResult
      expect(result.isError ?? false).toBe(false)
      const structured = result.structuredContent as { total: number; jobs: unknown[] }
      expect(structured.jobs).toHaveLength(25)
      expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(structured)
      // initialize, tools/list and tools/call answers are all over 512 bytes: each came as brotli.
      expect(encodings.filter((encoding) => encoding === 'br').length).toBeGreaterThanOrEqual(3)
    } finally {
      await client.close()
    }
  })
})

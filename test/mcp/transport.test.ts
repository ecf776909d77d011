/**
 * The HTTP rules the docs/agents.md puts in front of the SDK's
 * streamable-HTTP transport, checked with raw requests to a real server on
 * loopback: stateless, one JSON-RPC message per POST, 405 for GET and
 * DELETE, 202 for notifications, protocol version, body size, Origin and
 * (DNS-rebinding defence) Host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { buildFixture, startFixtureServer, type FixtureSnapshot } from '../support/fixtures.ts'
import {
  connectMcp,
  expectJsonRpcError,
  initializeMessage,
  nodeRequest,
  postMcp,
  POST_HEADERS,
  TOOL_NAMES,
  toolsListMessage,
  type RawResponse,
} from './support/mcp.ts'

const ONE_MB = 1024 * 1024
const ALLOWED_ORIGIN = 'https://allowed.example'

let fixture: FixtureSnapshot
/** Default configuration: any Origin. */
let open: RunningServer
/** JOBSNAP_MCP_ORIGINS=https://allowed.example */
let restricted: RunningServer

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 120, companies: 20, seed: 11 })
  const noLimits = { JOBSNAP_REST_LIMIT: 100_000, JOBSNAP_MCP_BURST: 100_000 }
  open = await startFixtureServer(fixture.distDir, noLimits)
  restricted = await startFixtureServer(fixture.distDir, { ...noLimits, JOBSNAP_MCP_ORIGINS: ALLOWED_ORIGIN })
})

afterAll(async () => {
  await open?.close()
  await restricted?.close()
  await fixture?.cleanup()
})

/** A tools/list request body padded (inside params._meta) to exactly `bytes` bytes. */
function paddedToolsList(bytes: number): string {
  const head = '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"pad":"'
  const tail = '"}}}'
  const body = head + 'a'.repeat(bytes - head.length - tail.length) + tail
  expect(Buffer.byteLength(body)).toBe(bytes)
  return body
}

function expectNoSession(response: { headers: Headers }) {
  expect(response.headers.get('mcp-session-id'), 'stateless: no Mcp-Session-Id').toBeNull()
}

function expectToolsList(response: RawResponse) {
  expect(response.status, response.text.slice(0, 300)).toBe(200)
  const body = JSON.parse(response.text) as { result: { tools: { name: string }[] } }
  expect(body.result.tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort())
}

describe('stateless', () => {
  it('initialize answers without a session id, in the 2025-11-25 protocol', async () => {
    const response = await postMcp(open.url, initializeMessage(1, '2025-11-25'))
    expect(response.status).toBe(200)
    expectNoSession(response)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    // Never cached: X-Cache BYPASS for MCP.
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('x-cache')).toBe('BYPASS')
    const body = JSON.parse(response.text) as {
      id: number
      result: { protocolVersion: string; serverInfo: { name: string }; capabilities: { tools?: object } }
    }
    expect(body.id).toBe(1)
    expect(body.result.protocolVersion).toBe('2025-11-25')
    expect(body.result.serverInfo.name).toBe('jobsnap')
    expect(body.result.capabilities.tools).toBeDefined()
  })

  it('answers any request on its own, without an initialize before it', async () => {
    const response = await postMcp(open.url, toolsListMessage(3), { 'mcp-protocol-version': '2025-11-25' })
    expectToolsList(response)
    expectNoSession(response)
    const call = await postMcp(open.url, {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'explain_schedule_type', arguments: { schedule_type: 'compressed_hours' } },
    })
    expect(call.status).toBe(200)
    expectNoSession(call)
    const body = JSON.parse(call.text) as {
      id: number
      result: { structuredContent: { schedule_types: { type: string }[] } }
    }
    expect(body.id).toBe(4)
    expect(body.result.structuredContent.schedule_types[0]!.type).toBe('compressed_hours')
  })

  it('the SDK client ends up with no session', async () => {
    const session = await connectMcp(open.url)
    try {
      expect(session.transport.sessionId).toBeUndefined()
      expect(session.client.getServerVersion()?.name).toBe('jobsnap')
    } finally {
      await session.close()
    }
  })
})

describe('one JSON-RPC message per POST', () => {
  it.each([
    ['a batch of two requests', [toolsListMessage(1), toolsListMessage(2)]],
    ['a batch of one request', [toolsListMessage(1)]],
    ['a batch holding an initialize', [initializeMessage(1)]],
    ['an empty batch', []],
  ])('%s -> 400 with a JSON-RPC error', async (_name, batch) => {
    const response = await postMcp(open.url, batch)
    expect(response.status).toBe(400)
    expectNoSession(response)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    const body = expectJsonRpcError(response.text, -32600)
    expect(body.id).toBeNull()
    expect(body.error.message).toMatch(/batch/i)
  })

  it('a body that is not JSON -> 400 parse error', async () => {
    const response = await postMcp(open.url, '{"jsonrpc": "2.0", "id": 1, "method": ')
    expect(response.status).toBe(400)
    expectJsonRpcError(response.text, -32700)
  })

  it('a JSON value that is not a message -> 400', async () => {
    for (const body of ['42', '"tools/list"', 'null']) {
      const response = await postMcp(open.url, body)
      expect(response.status, body).toBe(400)
      expectJsonRpcError(response.text)
    }
  })
})

describe('JSON-RPC envelope and params', () => {
  it.each([
    ['jsonrpc "1.0"', { jsonrpc: '1.0', id: 7, method: 'ping' }, 7],
    ['no jsonrpc member', { id: 'a', method: 'tools/list' }, 'a'],
    ['an object id', { jsonrpc: '2.0', id: {}, method: 'ping' }, null],
    ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'ping' }, null],
    ['a numeric method', { jsonrpc: '2.0', id: 8, method: 42 }, 8],
    ['params null', { jsonrpc: '2.0', id: 9, method: 'tools/call', params: null }, 9],
    ['params an array', { jsonrpc: '2.0', id: 10, method: 'tools/list', params: [] }, 10],
    ['neither request nor response', { jsonrpc: '2.0', id: 11 }, 11],
  ])('%s -> 400, -32600 Invalid Request, with the id when it is readable', async (_name, message, id) => {
    const response = await postMcp(open.url, message)
    expect(response.status).toBe(400)
    const body = expectJsonRpcError(response.text, -32600)
    expect(body.id).toEqual(id)
  })

  it.each([
    ['arguments a string', { name: 'search_jobs', arguments: 'x' }, /arguments/],
    ['arguments null', { name: 'search_jobs', arguments: null }, /arguments/],
    ['arguments an array', { name: 'search_jobs', arguments: [] }, /arguments/],
    ['no tool name', { arguments: {} }, /name/],
  ])('tools/call with %s -> -32602 Invalid params naming the member, never -32603', async (_name, params, member) => {
    const response = await postMcp(open.url, { jsonrpc: '2.0', id: 21, method: 'tools/call', params })
    const body = expectJsonRpcError(response.text, -32602)
    expect(body.id).toBe(21)
    expect(body.error.message).toMatch(member)
    expect(body.error.message, 'a sentence, not a raw validator dump').not.toMatch(/^\[/)
    expect(body.error.message, "in words, not the validator's").not.toMatch(/Invalid input|received|record/)
  })

  it.each(['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list'])(
    '%s with a cursor this server never issued -> -32602 naming the cursor; without one, the whole list',
    async (method) => {
      const response = await postMcp(open.url, { jsonrpc: '2.0', id: 41, method, params: { cursor: 'bogus' } })
      const body = expectJsonRpcError(response.text, -32602)
      expect(body.id).toBe(41)
      expect(body.error.message).toMatch(/cursor "bogus"/)
      const whole = JSON.parse((await postMcp(open.url, { jsonrpc: '2.0', id: 42, method, params: {} })).text)
      expect(whole.result, method).toBeDefined()
      expect(whole.result.nextCursor, method).toBeUndefined()
    },
  )

  it('an unknown tool -> -32602, and an unknown method -> -32601', async () => {
    const unknownTool = await postMcp(open.url, {
      jsonrpc: '2.0',
      id: 31,
      method: 'tools/call',
      params: { name: 'delete_job', arguments: {} },
    })
    expect(expectJsonRpcError(unknownTool.text, -32602).error.message).toMatch(/delete_job/)
    const unknownMethod = await postMcp(open.url, { jsonrpc: '2.0', id: 32, method: 'jobs/delete' })
    expectJsonRpcError(unknownMethod.text, -32601)
  })

  it('initialize advertises tools without listChanged: a stateless endpoint has no channel to announce changes', async () => {
    const response = await postMcp(open.url, initializeMessage(41))
    const body = JSON.parse(response.text) as { result: { capabilities: { tools?: { listChanged?: boolean } } } }
    expect(body.result.capabilities.tools).toEqual({ listChanged: false })
  })

  it('tools/list stays within 10 KB of compact JSON, with 2020-12 schemas free of meaningless bounds', async () => {
    const response = await postMcp(open.url, toolsListMessage(51))
    const { result } = JSON.parse(response.text) as { result: { tools: unknown[] } }
    const compact = JSON.stringify(result)
    expect(Buffer.byteLength(compact)).toBeLessThanOrEqual(10 * 1024)
    expect(compact).not.toContain(String(Number.MAX_SAFE_INTEGER))
    expect(compact).not.toContain('"$schema"')
  })
})

describe('methods', () => {
  it.each(['GET', 'DELETE', 'PUT', 'PATCH'])('%s -> 405 with Allow and a JSON-RPC error', async (method) => {
    const response = await fetch(`${open.url}/api/mcp`, {
      method,
      headers: { accept: 'application/json, text/event-stream' },
    })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toMatch(/\bPOST\b/)
    expectNoSession(response)
    expectJsonRpcError(await response.text())
  })

  it('GET with Accept: text/event-stream (an SSE stream request) is refused too', async () => {
    const response = await fetch(`${open.url}/api/mcp`, {
      headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    })
    expect(response.status).toBe(405)
    expect(response.headers.get('content-type')).not.toMatch(/event-stream/)
    await response.body?.cancel()
  })
})

describe('notifications and responses', () => {
  it('a notification -> 202 with no body', async () => {
    const response = await postMcp(
      open.url,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { 'mcp-protocol-version': '2025-11-25' },
    )
    expect(response.status).toBe(202)
    expect(response.text).toBe('')
    expectNoSession(response)
  })

  it('a cancellation notification -> 202 with no body', async () => {
    const response = await postMcp(open.url, {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 9, reason: 'test' },
    })
    expect(response.status).toBe(202)
    expect(response.text).toBe('')
  })

  it('a JSON-RPC response from the client -> 202 with no body', async () => {
    const response = await postMcp(open.url, { jsonrpc: '2.0', id: 5, result: {} })
    expect(response.status).toBe(202)
    expect(response.text).toBe('')
  })
})

describe('MCP-Protocol-Version', () => {
  it.each(['1999-01-01', '2025-13-01', 'latest'])('unsupported %s -> 400 with a JSON-RPC error', async (version) => {
    const response = await postMcp(open.url, toolsListMessage(1), { 'mcp-protocol-version': version })
    expect(response.status).toBe(400)
    const body = expectJsonRpcError(response.text)
    expect(body.error.message).toContain(version)
  })

  it.each(['2025-11-25', '2025-06-18', '2025-03-26'])('supported %s -> 200', async (version) => {
    expectToolsList(await postMcp(open.url, toolsListMessage(1), { 'mcp-protocol-version': version }))
  })
})

describe('body size', () => {
  it('a body well under 1 MB is accepted', async () => {
    expectToolsList(await postMcp(open.url, paddedToolsList(1_000_000)))
  })

  it('a body over 1 MB with Content-Length -> 413', async () => {
    const response = await postMcp(open.url, paddedToolsList(ONE_MB + 1))
    expect(response.status).toBe(413)
    expectJsonRpcError(response.text)
  })

  it('a body over 1 MB sent in chunks, without Content-Length -> 413', async () => {
    const body = Buffer.from(paddedToolsList(3 * ONE_MB))
    const chunks: Buffer[] = []
    for (let offset = 0; offset < body.length; offset += 64 * 1024)
      chunks.push(body.subarray(offset, offset + 64 * 1024))
    const response = await nodeRequest(`${open.url}/api/mcp`, { headers: { ...POST_HEADERS }, chunks })
    expect(response.status).toBe(413)
    expectJsonRpcError(response.text)
  })

  it('a Content-Length that claims more than 1 MB is refused before the body is read', async () => {
    const response = await nodeRequest(`${open.url}/api/mcp`, {
      headers: { ...POST_HEADERS, 'content-length': String(ONE_MB * 5) },
      body: Buffer.from(JSON.stringify(toolsListMessage(1))),
    })
    expect(response.status).toBe(413)
  })
})

describe('Origin', () => {
  it('with JOBSNAP_MCP_ORIGINS set, an Origin outside it -> 403', async () => {
    for (const origin of [
      'https://evil.example',
      'http://allowed.example',
      'https://allowed.example.evil.example',
      'https://allowed.example:8443',
      'null',
    ]) {
      const response = await postMcp(restricted.url, toolsListMessage(1), { origin })
      expect(response.status, origin).toBe(403)
      expectJsonRpcError(response.text)
      // Nothing a browser would read as permission.
      expect(response.headers.get('access-control-allow-origin'), origin).toBeNull()
    }
  })

  it('with JOBSNAP_MCP_ORIGINS set, the allowed Origin and a request without Origin work', async () => {
    const allowed = await postMcp(restricted.url, toolsListMessage(1), { origin: ALLOWED_ORIGIN })
    expectToolsList(allowed)
    // CORS names the allowed Origin itself, never `*`, and says the answer varies by Origin.
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN)
    expect(allowed.headers.get('vary')).toMatch(/origin/i)
    expectToolsList(await postMcp(restricted.url, toolsListMessage(1)))
  })

  it('the SDK client works against the restricted server (it sends no Origin)', async () => {
    const session = await connectMcp(restricted.url)
    try {
      expect(session.tools.size).toBe(TOOL_NAMES.length)
    } finally {
      await session.close()
    }
  })

  it('by default (*) any Origin is allowed', async () => {
    expectToolsList(await postMcp(open.url, toolsListMessage(1), { origin: 'https://evil.example' }))
  })
})

describe('CORS preflight', () => {
  it('OPTIONS from an allowed Origin -> 204 allowing POST and the MCP headers', async () => {
    const response = await fetch(`${restricted.url}/api/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-protocol-version',
      },
    })
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-methods')).toMatch(/\bPOST\b/)
    expect(response.headers.get('access-control-allow-headers')).toMatch(/mcp-protocol-version/i)
    expect(response.headers.get('access-control-allow-headers')).toMatch(/content-type/i)
    // Not counted against the bucket, but it says where the client stands.
    expect(response.headers.get('ratelimit-policy')).toMatch(/^"mcp";q=\d+;w=\d+$/)
    const remaining = Number(response.headers.get('x-ratelimit-remaining'))
    expect(remaining).toBeGreaterThan(0)
    const again = await fetch(`${restricted.url}/api/mcp`, { method: 'OPTIONS', headers: { origin: ALLOWED_ORIGIN } })
    expect(Number(again.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(remaining)
  })

  it('OPTIONS from an Origin outside JOBSNAP_MCP_ORIGINS -> 403', async () => {
    const response = await fetch(`${restricted.url}/api/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    })
    expect(response.status).toBe(403)
    await response.arrayBuffer()
  })
})

describe('Host on a loopback listener', () => {
  const port = () => new URL(open.url).port

  it.each(['evil.example', 'evil.example:PORT', '127.0.0.1.evil.example', 'localhost.evil.example:PORT', '10.0.0.1'])(
    'Host %s -> 403',
    async (host) => {
      const response = await nodeRequest(`${open.url}/api/mcp`, {
        headers: { ...POST_HEADERS, host: host.replace('PORT', port()) },
        body: JSON.stringify(toolsListMessage(1)),
      })
      expect(response.status).toBe(403)
      expectJsonRpcError(response.text)
    },
  )

  it.each(['[::1].evil.example', 'localhost:PORT:1'])(
    'Host %s, no host at all -> 400 before any route',
    async (host) => {
      const response = await nodeRequest(`${open.url}/api/mcp`, {
        headers: { ...POST_HEADERS, host: host.replace('PORT', port()) },
        body: JSON.stringify(toolsListMessage(1)),
      })
      expect(response.status).toBe(400)
      expect(JSON.parse(response.text).error.code).toBe(400)
    },
  )

  it.each(['127.0.0.1:PORT', 'localhost:PORT', 'LOCALHOST:PORT', 'localhost'])('Host %s -> 200', async (host) => {
    const response = await nodeRequest(`${open.url}/api/mcp`, {
      headers: { ...POST_HEADERS, host: host.replace('PORT', port()) },
      body: JSON.stringify(toolsListMessage(1)),
    })
    expect(response.status, response.text.slice(0, 200)).toBe(200)
  })

  it('a foreign Host is refused whatever the Origin setting, even with the allowed Origin', async () => {
    const response = await nodeRequest(`${restricted.url}/api/mcp`, {
      headers: { ...POST_HEADERS, host: 'evil.example', origin: ALLOWED_ORIGIN },
      body: JSON.stringify(toolsListMessage(1)),
    })
    expect(response.status).toBe(403)
  })
})

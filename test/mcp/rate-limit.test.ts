/**
 * The MCP rate bucket (docs/api.md: Rate limits, and
 * docs/agents.md): per client, a burst of 60 refilled at 5 per second, separate
 * from the REST bucket; over it, HTTP 429 with Retry-After. Every server
 * here runs on a clock the test moves, so "the same instant" and "one
 * second later" are exact; each test that drains a bucket has its own server.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { ConfigInput } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { buildFixture, FIXTURE_NOW, startFixtureServer, type FixtureSnapshot } from '../support/fixtures.ts'
import {
  callOk,
  connectMcp,
  expectJsonRpcError,
  nodeRequest,
  postMcp,
  POST_HEADERS,
  toolsListMessage,
  type RawResponse,
} from './support/mcp.ts'

let fixture: FixtureSnapshot
const servers: RunningServer[] = []

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 120, companies: 20, seed: 5 })
})

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

afterAll(async () => {
  await fixture?.cleanup()
})

/** A server of its own on a clock the test moves. */
async function serverWithClock(
  overrides: ConfigInput = {},
): Promise<{ server: RunningServer; advance(ms: number): void }> {
  let now = FIXTURE_NOW.getTime()
  const server = await startFixtureServer(fixture.distDir, overrides, () => now)
  servers.push(server)
  return { server, advance: (ms) => (now += ms) }
}

const mcpCall = (server: RunningServer, id = 1) => postMcp(server.url, toolsListMessage(id))
const restCall = (server: RunningServer, path = '/api/v2/jobs?limit=1') => fetch(`${server.url}${path}`)

function expectAllowed(response: RawResponse, remaining: number) {
  expect(response.status, response.text.slice(0, 200)).toBe(200)
  expect(response.headers.get('x-ratelimit-limit')).toBe('60')
  expect(response.headers.get('x-ratelimit-remaining')).toBe(String(remaining))
  expect(response.headers.get('ratelimit')).toMatch(new RegExp(`^"mcp";r=${remaining};t=\\d+$`))
  expect(response.headers.get('ratelimit-policy')).toMatch(/^"mcp";q=60;w=\d+$/)
}

/** Asserts a 429 from the MCP bucket; returns Retry-After in seconds. */
function expectLimited(response: RawResponse): number {
  expect(response.status, response.text.slice(0, 200)).toBe(429)
  const retryAfter = response.headers.get('retry-after')
  expect(retryAfter, 'Retry-After is an integer number of seconds').toMatch(/^\d+$/)
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
  expect(response.headers.get('x-ratelimit-remaining')).toBe('0')
  expect(response.headers.get('x-ratelimit-reset')).toBe(retryAfter)
  expect(response.headers.get('ratelimit')).toMatch(/^"mcp";r=0;t=\d+$/)
  expect(response.headers.get('cache-control')).toBe('no-store')
  expect(response.headers.get('mcp-session-id')).toBeNull()
  expectJsonRpcError(response.text)
  return Number(retryAfter)
}

describe('MCP bucket: what the 429 and the reset figures say', () => {
  it("a 429 carries the refused request's id, and t means seconds until remaining next goes up on a 200 and a 429 alike", async () => {
    const { server } = await serverWithClock()
    const first = await mcpCall(server, 1)
    expectAllowed(first, 59)
    // 59 tokens left, refilled at 5 a second: one more token within a second, not the 0.2 s x 1 to the top.
    expect(first.headers.get('ratelimit')).toBe('"mcp";r=59;t=1')
    for (let i = 2; i <= 60; i++) await mcpCall(server, i)
    const refused = await postMcp(server.url, toolsListMessage('call-61'))
    expectLimited(refused)
    expect(refused.headers.get('ratelimit')).toBe('"mcp";r=0;t=1')
    expect(expectJsonRpcError(refused.text).id).toBe('call-61')
  })
})

describe('MCP bucket: burst 60, refilled at 5 per second', () => {
  it('allows 60 calls in one instant, answers the 61st with 429 and Retry-After, then 5 more one second later', async () => {
    const { server, advance } = await serverWithClock()
    for (let i = 1; i <= 60; i++) expectAllowed(await mcpCall(server, i), 60 - i)
    const retryAfter = expectLimited(await mcpCall(server, 61))
    expect(retryAfter).toBe(1)
    // Refused calls do not dig the hole deeper.
    expectLimited(await mcpCall(server, 62))

    advance(1000)
    for (let i = 0; i < 5; i++) expect((await mcpCall(server, 100 + i)).status, `refilled call ${i + 1}`).toBe(200)
    expectLimited(await mcpCall(server, 105))
  })

  it('refills continuously: a fifth of a second gives back one call', async () => {
    const { server, advance } = await serverWithClock()
    for (let i = 1; i <= 60; i++) await mcpCall(server, i)
    expectLimited(await mcpCall(server))
    advance(100)
    expectLimited(await mcpCall(server))
    advance(100)
    expect((await mcpCall(server)).status).toBe(200)
    expectLimited(await mcpCall(server))
  })

  it('never holds more than the burst, however long the client was idle', async () => {
    const { server, advance } = await serverWithClock()
    expectAllowed(await mcpCall(server), 59)
    advance(3_600_000)
    for (let i = 1; i <= 60; i++) expectAllowed(await mcpCall(server, i), 60 - i)
    expectLimited(await mcpCall(server))
  })

  it('counts every POST, tool calls and notifications alike, and GETs too', async () => {
    const { server } = await serverWithClock()
    const session = await connectMcp(server.url)
    try {
      const probe = await mcpCall(server)
      const remaining = Number(probe.headers.get('x-ratelimit-remaining'))
      expect(remaining).toBeLessThan(59)
      await callOk(session, 'explain_schedule_type', {})
      await postMcp(server.url, { jsonrpc: '2.0', method: 'notifications/initialized' })
      await fetch(`${server.url}/api/mcp`)
      expectAllowed(await mcpCall(server), remaining - 4)
    } finally {
      await session.close()
    }
  })

  it('the SDK client sees the 429 as an HTTP error, both mid-session and on connect', async () => {
    const { server } = await serverWithClock()
    const session = await connectMcp(server.url)
    try {
      let remaining = Number((await mcpCall(server)).headers.get('x-ratelimit-remaining'))
      while (remaining > 0) remaining = Number((await mcpCall(server)).headers.get('x-ratelimit-remaining'))
      const midSession = await session.client.callTool({ name: 'get_market_stats', arguments: {} }).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(midSession).toBeInstanceOf(StreamableHTTPError)
      expect((midSession as StreamableHTTPError).code).toBe(429)
      const onConnect = await connectMcp(server.url).then(
        async (late) => {
          await late.close()
          return undefined
        },
        (error: unknown) => error,
      )
      expect(onConnect, 'a new client cannot connect while the bucket is empty').toBeInstanceOf(StreamableHTTPError)
      expect((onConnect as StreamableHTTPError).code).toBe(429)
      expect((onConnect as StreamableHTTPError).message).toMatch(/rate limit/i)
    } finally {
      await session.close()
    }
  })

  it('takes its size and refill from JOBSNAP_MCP_BURST and JOBSNAP_MCP_RATE', async () => {
    const { server, advance } = await serverWithClock({ JOBSNAP_MCP_BURST: 3, JOBSNAP_MCP_RATE: 0.5 })
    for (let i = 0; i < 3; i++) expect((await mcpCall(server)).status).toBe(200)
    const limited = await mcpCall(server)
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after'), 'one call back takes 2 s at 0.5/s').toBe('2')
    expect(limited.headers.get('ratelimit-policy')).toMatch(/^"mcp";q=3;/)
    advance(1000)
    const stillLimited = await mcpCall(server)
    expect(stillLimited.status).toBe(429)
    expect(stillLimited.headers.get('retry-after')).toBe('1')
    advance(1000)
    expect((await mcpCall(server)).status).toBe(200)
    expect((await mcpCall(server)).status).toBe(429)
  })

  it('is per client: another loopback address has its own bucket', async () => {
    const { server } = await serverWithClock()
    for (let i = 1; i <= 60; i++) await mcpCall(server, i)
    expectLimited(await mcpCall(server))
    const other = await nodeRequest(`${server.url}/api/mcp`, {
      headers: { ...POST_HEADERS },
      body: JSON.stringify(toolsListMessage(1)),
      localAddress: '127.0.0.2',
    })
    expect(other.status).toBe(200)
    expect(other.headers['x-ratelimit-remaining']).toBe('59')
    expectLimited(await mcpCall(server))
  })
})

describe('the MCP bucket is separate from the REST bucket', () => {
  it('exhausting REST leaves MCP working', async () => {
    const { server } = await serverWithClock()
    for (let i = 1; i <= 60; i++) {
      const response = await restCall(server, i % 2 ? '/api/v2/jobs?limit=1' : '/api/v1?limit=1')
      expect(response.status).toBe(200)
      await response.arrayBuffer()
    }
    const rest = await restCall(server)
    expect(rest.status).toBe(429)
    await rest.arrayBuffer()

    expectAllowed(await mcpCall(server), 59)
    const session = await connectMcp(server.url)
    try {
      await callOk(session, 'search_jobs', { schedule: ['4_day_week'] })
    } finally {
      await session.close()
    }
    const stillLimited = await restCall(server)
    expect(stillLimited.status, 'MCP calls did not refill REST').toBe(429)
    expect(stillLimited.headers.get('ratelimit-policy')).toMatch(/^"rest";q=60;w=60$/)
  })

  it('exhausting MCP leaves REST working', async () => {
    const { server } = await serverWithClock()
    for (let i = 1; i <= 60; i++) expect((await mcpCall(server, i)).status).toBe(200)
    expectLimited(await mcpCall(server))

    const v2 = await restCall(server)
    expect(v2.status).toBe(200)
    expect(v2.headers.get('x-ratelimit-remaining'), 'REST has its whole budget').toBe('59')
    expect(v2.headers.get('ratelimit')).toMatch(/^"rest";r=59;/)
    await v2.arrayBuffer()
    const one = await fetch(
      `${server.url}/api/v2/jobs/${((await (await restCall(server)).json()) as { data: { slug: string }[] }).data[0]!.slug}`,
    )
    expect(one.status).toBe(200)
    await one.arrayBuffer()

    expectLimited(await mcpCall(server))
  })
})

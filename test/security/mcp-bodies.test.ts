/**
 * Hostile bodies for /api/mcp: oversize (declared, chunked, lying), not JSON,
 * JSON-RPC batches of any size, scalars, deep nesting, arbitrary messages and
 * tool arguments, traversal slugs, wrong content types, methods, Host and
 * Origin. Every answer is a 4xx with a JSON-RPC error, a 202, or a 200
 * JSON-RPC reply; never a 5xx, a stack trace or a file from outside the
 * snapshot.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MCP_MAX_BODY_BYTES, type RunningServer } from '../../runtime/index.ts'
import { startFixtureServer } from '../support/fixtures.ts'
import { problemsOf, startHostileServer, Tally, type HostileSetup } from './support/harness.ts'
import { rawExchange, rawGet, rawPost, targetOf, type RawResponse } from '../../support/raw-http.ts'

let setup: HostileSetup
const tally = new Tally()
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const TOOLS = ['search_jobs', 'get_job', 'search_companies', 'get_company', 'get_market_stats', 'explain_schedule_type']

beforeAll(async () => {
  setup = await startHostileServer()
})

afterAll(async () => {
  console.log(tally.summary('MCP bodies'))
  await setup?.close()
})

function post(body: string | Buffer, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawPost(setup.target, '/api/mcp', body, { ...MCP_HEADERS, ...headers })
}

function check(res: RawResponse, where: string): string[] {
  tally.record(res)
  return problemsOf(res, where, { canaries: setup.canaries, jsonRpc: true })
}

function jsonRpcError(res: RawResponse): { code: number; message: string } | undefined {
  return (JSON.parse(res.text) as { error?: { code: number; message: string } }).error
}

const call = (name: string, args: unknown, id: unknown = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

describe('body size', () => {
  it(`exactly ${MCP_MAX_BODY_BYTES} bytes is read; one more is a 413, declared, chunked or lied about`, async () => {
    const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    const atLimit = await post(message + ' '.repeat(MCP_MAX_BODY_BYTES - message.length))
    expect(check(atLimit, 'at limit')).toEqual([])
    expect(atLimit.status).toBe(200)
    const overLimit = await post(message + ' '.repeat(MCP_MAX_BODY_BYTES - message.length + 1))
    expect(check(overLimit, 'limit + 1')).toEqual([])
    expect(overLimit.status).toBe(413)

    const chunk = Buffer.from(`C350\r\n${' '.repeat(50_000)}\r\n`)
    const chunked = await rawExchange(
      setup.target,
      Buffer.concat([
        Buffer.from(
          `POST /api/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n`,
        ),
        ...Array.from({ length: 60 }, () => chunk),
        Buffer.from('0\r\n\r\n'),
      ]),
    )
    expect(check(chunked, 'chunked 3 MB')).toEqual([])
    expect(chunked.status).toBe(413)

    const lying = await rawExchange(
      setup.target,
      `POST /api/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: 999999999999\r\nconnection: close\r\n\r\n{}`,
    )
    expect(check(lying, 'content-length 1 TB')).toEqual([])
    expect(lying.status).toBe(413)

    const huge = await post(Buffer.alloc(16 * 1024 * 1024, 0x20))
    expect(check(huge, '16 MB')).toEqual([])
    expect(huge.status).toBe(413)
  })
})

describe('malformed and unexpected messages (fast-check)', () => {
  it('any body that is not JSON is a 400 parse error (-32700)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
        ),
        async (text) => {
          let isJson = true
          try {
            JSON.parse(Buffer.from(text, 'utf8').toString('utf8'))
          } catch {
            isJson = false
          }
          fc.pre(!isJson)
          const res = await post(text)
          expect(check(res, JSON.stringify(text))).toEqual([])
          expect(res.status).toBe(400)
          expect(jsonRpcError(res)?.code).toBe(-32700)
        },
      ),
      { numRuns: 150 },
    )
  })

  it('any JSON-RPC batch is a 400 (-32600), from empty to 20,000 messages', async () => {
    const request = fc.record({
      jsonrpc: fc.constant('2.0'),
      id: fc.nat(),
      method: fc.constantFrom('tools/list', 'tools/call', 'initialize', 'ping'),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.array(request, { maxLength: 30 }), fc.array(fc.jsonValue(), { maxLength: 10 })),
        async (batch) => {
          const res = await post(JSON.stringify(batch))
          expect(check(res, 'batch')).toEqual([])
          expect(res.status).toBe(400)
          expect(jsonRpcError(res)?.code).toBe(-32600)
        },
      ),
      { numRuns: 60 },
    )
    const big = await post(
      JSON.stringify(Array.from({ length: 20_000 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/list' }))),
    )
    expect(check(big, '20,000-message batch')).toEqual([])
    expect(big.status).toBe(400)
  })

  it('JSON that is not an object is a 400 (-32600)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constant(null), fc.boolean(), fc.double({ noNaN: true }), fc.string()),
        async (value) => {
          const res = await post(JSON.stringify(value))
          expect(check(res, JSON.stringify(value))).toEqual([])
          expect(res.status).toBe(400)
        },
      ),
      { numRuns: 40 },
    )
  })

  it('any JSON object, and any JSON-RPC call of any method with any params, gets a 4xx, a 202 or a JSON-RPC reply', async () => {
    const message = fc.oneof(
      fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
      fc.record({
        jsonrpc: fc.constantFrom('2.0', '1.0', 2),
        id: fc.oneof(fc.nat(), fc.string(), fc.constant(null), fc.jsonValue({ maxDepth: 1 })),
        method: fc.oneof(
          fc.constantFrom(
            'tools/list',
            'tools/call',
            'initialize',
            'ping',
            'resources/list',
            'prompts/get',
            'logging/setLevel',
            'completion/complete',
          ),
          fc.string(),
        ),
        params: fc.jsonValue({ maxDepth: 4 }),
      }),
    )
    await fc.assert(
      fc.asyncProperty(message, async (value) => {
        const res = await post(JSON.stringify(value))
        expect(check(res, JSON.stringify(value).slice(0, 200))).toEqual([])
        expect([200, 202, 400, 404, 406, 415].includes(res.status), `${res.status} ${res.text.slice(0, 200)}`).toBe(
          true,
        )
      }),
      { numRuns: 150 },
    )
  })

  it('every tool, called with any arguments, answers a JSON-RPC result or error', async () => {
    const args = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record(
        {
          query: fc.oneof(fc.string({ maxLength: 300 }), fc.jsonValue({ maxDepth: 1 })),
          slug: fc.oneof(
            fc.constantFrom(
              '../../secret.txt',
              '..%2f..%2fsecret',
              '/etc/passwd',
              'planted-canary',
              '',
              'a'.repeat(300),
            ),
            fc.string(),
          ),
          page: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, 201, -1, 1e308, '2')),
          skills: fc.array(fc.string(), { maxLength: 50 }),
          category: fc.oneof(fc.array(fc.string()), fc.string()),
          country: fc.oneof(fc.string({ maxLength: 5_000 }), fc.constantFrom('DE', 'Worldwide', 'xx')),
          schedule: fc.array(fc.string()),
          schedule_type: fc.string(),
          sort: fc.string(),
          posted_within_days: fc.oneof(fc.integer(), fc.double()),
          min_work_life_score: fc.oneof(fc.integer(), fc.double()),
          remote_level: fc.array(fc.string()),
          hires_worldwide: fc.jsonValue({ maxDepth: 1 }),
          __proto__: fc.jsonValue({ maxDepth: 2 }),
        },
        { requiredKeys: [] },
      ),
    )
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constantFrom(...TOOLS), fc.string()), args, async (name, values) => {
        const res = await post(call(name, values))
        expect(check(res, `${name} ${JSON.stringify(values).slice(0, 200)}`)).toEqual([])
        expect(res.status).toBe(200)
        const reply = JSON.parse(res.text) as { result?: unknown; error?: unknown }
        expect(reply.result !== undefined || reply.error !== undefined).toBe(true)
      }),
      { numRuns: 200 },
    )
  })

  it('traversal slugs in get_job and get_company are tool errors and read nothing', async () => {
    const problems: string[] = []
    for (const tool of ['get_job', 'get_company']) {
      for (const slug of [
        '../../secret.txt',
        '../../../secret.txt',
        '../../../../secret',
        '..%2f..%2fsecret',
        '..\\..\\secret.txt',
        '/etc/passwd',
        'planted-canary',
        'secret',
        '../manifest',
        '../../index/jobs',
        '%00',
        'a\u0000b',
        '\u202e',
      ]) {
        const res = await post(call(tool, { slug }))
        problems.push(...check(res, `${tool} ${slug}`))
        const result = (JSON.parse(res.text) as { result?: { isError?: boolean } }).result
        if (res.status !== 200 || result?.isError !== true)
          problems.push(`${tool} ${JSON.stringify(slug)}: ${res.status} ${res.text.slice(0, 120)}`)
      }
    }
    expect(problems).toEqual([])
  })

  it('deep nesting (400,000 arrays; 150,000 objects in params and in arguments) is answered, not crashed on', async () => {
    const cases: [string, string][] = [
      ['deep array', '['.repeat(400_000) + ']'.repeat(400_000)],
      [
        'deep params',
        `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${'{"a":'.repeat(150_000)}1${'}'.repeat(150_000)}}`,
      ],
      [
        'deep arguments',
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_jobs","arguments":{"x":${'{"a":'.repeat(150_000)}1${'}'.repeat(150_000)}}}}`,
      ],
      ['deep id', `{"jsonrpc":"2.0","id":${'['.repeat(200_000)}${']'.repeat(200_000)},"method":"tools/list"}`],
    ]
    for (const [where, body] of cases) {
      const res = await post(body)
      expect(check(res, where), where).toEqual([])
    }
    const after = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))
    expect(after.status).toBe(200)
  })

  it('bytes that are not UTF-8, a BOM, UTF-16 and NUL bytes', async () => {
    const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    for (const [where, body] of [
      ['BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(message)])],
      ['UTF-16', Buffer.from(message, 'utf16le')],
      ['invalid UTF-8', Buffer.from([0x7b, 0xc0, 0xae, 0xff, 0x7d])],
      ['NUL', Buffer.from(`${message}\u0000`)],
    ] as const) {
      const res = await post(body)
      expect(check(res, where), where).toEqual([])
    }
  })
})

describe('transport rules', () => {
  it('wrong content types and Accept headers are a 415 or 406', async () => {
    const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    const problems: string[] = []
    for (const contentType of [
      '',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'text/html',
      'application/xml',
      'application/jsonx',
      'json',
    ]) {
      const res = await post(message, { 'content-type': contentType })
      problems.push(...check(res, `content-type ${contentType}`))
      if (res.status !== 415) problems.push(`content-type ${JSON.stringify(contentType)}: ${res.status}`)
      if (JSON.parse(res.text).id !== 1) problems.push(`content-type ${JSON.stringify(contentType)}: id ${res.text}`)
    }
    for (const accept of ['', 'text/html', 'application/json', 'text/event-stream', '*/*;q=0']) {
      const res = await post(message, { accept })
      problems.push(...check(res, `accept ${accept}`))
      if (res.status !== 406) problems.push(`accept ${JSON.stringify(accept)}: ${res.status}`)
      // The reply carries the request's id, which was readable.
      if (JSON.parse(res.text).id !== 1) problems.push(`accept ${JSON.stringify(accept)}: id ${res.text}`)
    }
    expect(problems).toEqual([])
  })

  it('methods other than POST are a 405; an unsupported protocol version a 400', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'TRACE', 'PROPFIND']) {
      const res = await rawGet(setup.target, '/api/mcp', {}, method)
      expect(check(res, method)).toEqual([])
      expect(res.status, method).toBe(405)
    }
    const version = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), {
      'mcp-protocol-version': '1999-01-01',
    })
    expect(check(version, 'protocol version')).toEqual([])
    expect(version.status).toBe(400)
  })

  it('a Host that is not loopback is a 403 (DNS rebinding); so is an Origin outside the allowed list', async () => {
    const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    for (const host of [
      'evil.example',
      'evil.example:80',
      '127.0.0.1.evil.example',
      'localhost.evil.example',
      '128.0.0.1',
      '127.1',
      '0x7f.0.0.1',
      '[::2]',
    ]) {
      const res = await post(message, { host })
      expect(check(res, `host ${host}`)).toEqual([])
      expect(res.status, host).toBe(403)
    }
    // Every name that can only mean this machine is answered: all of 127.0.0.0/8, localhost as a full name, [::1].
    for (const host of [
      '127.0.0.2:9',
      '127.255.255.254',
      'LOCALHOST.',
      'localhost.:80',
      '[::1]:80',
      '[0:0:0:0:0:0:0:1]',
    ]) {
      const res = await post(message, { host })
      expect(res.status, host).toBe(200)
    }
    // A Host that is no host at all is refused before any route (RFC 9112 3.2), with the REST error body.
    for (const host of ['[::1].evil', 'localhost:80:1', '127.0.0.1@evil', 'a b', 'x:99999']) {
      const res = await post(message, { host })
      expect(problemsOf(res, `host ${host}`, { canaries: setup.canaries })).toEqual([])
      expect(res.status, host).toBe(400)
    }
    // No Host at all: refused before any route, with the REST error body.
    const noHost = await post(message, { host: '' })
    tally.record(noHost)
    expect(problemsOf(noHost, 'no host', { canaries: setup.canaries })).toEqual([])
    expect(noHost.status).toBe(400)
    let restricted: RunningServer | undefined
    try {
      restricted = await startFixtureServer(setup.fixture.distDir, {
        JOBSNAP_MCP_ORIGINS: 'https://agent.example',
        JOBSNAP_MCP_BURST: 1_000,
      })
      const target = targetOf(restricted.url)
      for (const origin of [
        'https://evil.example',
        'null',
        'https://agent.example.evil',
        'http://agent.example',
        'https://agent.example:8443',
        'HTTPS://AGENT.EXAMPLE.evil',
      ]) {
        const res = await rawPost(target, '/api/mcp', message, { ...MCP_HEADERS, origin })
        expect(check(res, `origin ${origin}`)).toEqual([])
        expect(res.status, origin).toBe(403)
      }
      const allowed = await rawPost(target, '/api/mcp', message, { ...MCP_HEADERS, origin: 'https://agent.example' })
      expect(allowed.status).toBe(200)
    } finally {
      await restricted?.close()
    }
  })
})

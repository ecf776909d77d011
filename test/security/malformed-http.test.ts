/**
 * Requests that are not well-formed HTTP, or ask for things a read-only API
 * does not do: other methods (CONNECT included), bodies on REST paths,
 * smuggling shapes (Content-Length with Transfer-Encoding), protocol junk,
 * a missing Host, and Host/X-Forwarded-Host values trying to get into
 * responses or the cache. All are answered with a 4xx and the error body
 * (or served normally, where the request is in fact valid), never a 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { problemsOf, startHostileServer, Tally, type HostileSetup } from './support/harness.ts'
import { rawExchange, rawGet, rawPost, type RawResponse } from '../../support/raw-http.ts'

let setup: HostileSetup
const tally = new Tally()

beforeAll(async () => {
  setup = await startHostileServer()
})

afterAll(async () => {
  console.log(tally.summary('malformed HTTP'))
  await setup?.close()
})

function check(res: RawResponse, where: string, options: { head?: boolean } = {}): string[] {
  tally.record(res)
  return problemsOf(res, where, { canaries: setup.canaries, ...options })
}

describe('methods and bodies', () => {
  it('every method but GET/HEAD/OPTIONS on every REST path is a 405 with Allow; CONNECT too; unknown tokens a 400', async () => {
    const problems: string[] = []
    for (const path of ['/api/v1', '/api/v2/jobs', '/api/v2/jobs/some-slug', '/openapi.yaml']) {
      for (const method of [
        'POST',
        'PUT',
        'DELETE',
        'PATCH',
        'TRACE',
        'PROPFIND',
        'MKCOL',
        'SEARCH',
        'QUERY',
        'LOCK',
      ]) {
        const res = await rawGet(setup.target, path, {}, method)
        problems.push(...check(res, `${method} ${path}`))
        if (res.status !== 405 || !res.headers.allow?.includes('GET'))
          problems.push(`${method} ${path}: ${res.status}, allow ${res.headers.allow}`)
      }
    }
    const connect = await rawExchange(setup.target, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n')
    problems.push(...check(connect, 'CONNECT'))
    if (connect.status !== 405) problems.push(`CONNECT: ${connect.status}`)
    for (const method of ['FOO', 'get', 'G ET', 'GET\u0000']) {
      const res = await rawExchange(
        setup.target,
        `${method} /api/v2/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      )
      problems.push(...check(res, `method ${JSON.stringify(method)}`))
      if (res.status !== 400) problems.push(`method ${JSON.stringify(method)}: ${res.status}`)
    }
    expect(problems).toEqual([])
  })

  it('a 1 MB body on a REST path is refused (405) without being read into a 5xx; HEAD has no body', async () => {
    const res = await rawPost(setup.target, '/api/v2/jobs', Buffer.alloc(1024 * 1024, 0x41), {
      'content-type': 'application/json',
    })
    expect(check(res, 'POST 1 MB')).toEqual([])
    expect(res.status).toBe(405)
    const head = await rawGet(setup.target, '/api/v2/jobs/no-such-job', {}, 'HEAD')
    expect(check(head, 'HEAD 404', { head: true })).toEqual([])
    expect(head.status).toBe(404)
    expect(head.body.length).toBe(0)
  })
})

describe('protocol junk', () => {
  const cases: [string, string | Buffer][] = [
    ['no Host on HTTP/1.1', 'GET /api/v2/jobs HTTP/1.1\r\nConnection: close\r\n\r\n'],
    [
      'Content-Length and Transfer-Encoding',
      'POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n',
    ],
    [
      'two Content-Lengths',
      'POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}',
    ],
    [
      'Content-Length not a number',
      'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\nConnection: close\r\n\r\n',
    ],
    [
      'negative Content-Length',
      'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\nConnection: close\r\n\r\n',
    ],
    [
      'Transfer-Encoding: chunked, identity',
      'POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked, identity\r\nConnection: close\r\n\r\n0\r\n\r\n',
    ],
    [
      'bad chunk size',
      'POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    ],
    ['obs-fold header', 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\r\n b\r\nConnection: close\r\n\r\n'],
    ['space before colon', 'GET /health HTTP/1.1\r\nHost : 127.0.0.1\r\nConnection: close\r\n\r\n'],
    ['NUL in a header', 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\u0000b\r\nConnection: close\r\n\r\n'],
    ['bare LF line ends', 'GET /health HTTP/1.1\nHost: 127.0.0.1\nConnection: close\n\n'],
    ['HTTP/2 preface over HTTP/1', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
    [
      'TLS ClientHello',
      Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a]),
    ],
    ['HTTP/9.9', 'GET /health HTTP/9.9\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'],
    ['absolute-form file:', 'GET file:///etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'],
    [
      'absolute-form bad port',
      'GET http://a:99999/api/v2/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    ],
    ['authority-form on GET', 'GET 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'],
    ['header name with a space', 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX A: b\r\nConnection: close\r\n\r\n'],
    ['CR inside a header value', 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\rb\r\nConnection: close\r\n\r\n'],
    ['two Host lines', 'GET /api/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n'],
    ['a Host with a space', 'GET /api/v1 HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n'],
    ['a Host with a port past 65535', 'GET /api/v1 HTTP/1.1\r\nHost: x:99999\r\nConnection: close\r\n\r\n'],
  ]

  it(`${cases.length} malformed or smuggling-shaped requests each get a 4xx with the error body`, async () => {
    const problems: string[] = []
    for (const [where, request] of cases) {
      const res = await rawExchange(setup.target, request)
      problems.push(...check(res, where))
      if (res.status < 400 || res.status >= 500) problems.push(`${where}: ${res.status} ${res.text.slice(0, 100)}`)
    }
    expect(problems).toEqual([])
  })

  it('a request line of another major HTTP version is a 505 with the error body (this server speaks HTTP/1.x)', async () => {
    // (llhttp itself refuses versions past 2 as malformed: 400.)
    for (const version of ['2.0']) {
      const res = await rawExchange(
        setup.target,
        `GET /api/v1 HTTP/${version}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      )
      expect(res.status, version).toBe(505)
      expect(JSON.parse(res.text)).toEqual({ error: { code: 505, message: expect.stringMatching(/HTTP\/1\.1/) } })
    }
    const old = await rawExchange(setup.target, 'GET /api/v1 HTTP/1.0\r\n\r\n')
    expect(old.status, 'HTTP/1.0 is still served').toBe(200)
  })

  it('a valid request pipelined before garbage is answered, then the garbage gets a 400', async () => {
    const res = await rawExchange(setup.target, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGARBAGE\u0001\r\n\r\n')
    const text = res.raw.toString('latin1')
    expect(text.startsWith('HTTP/1.1 200')).toBe(true)
    const second = text.indexOf('HTTP/1.1 400')
    expect(second).toBeGreaterThan(0)
    expect(text.slice(second)).toContain('"code":400')
  })

  it('requests pipelined before garbage are all answered, in order, before its 400 (computed ones too)', async () => {
    const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`
    const res = await rawExchange(
      setup.target,
      `${get('/api/v1?page=2')}${get('/api/v2/jobs?limit=77&q=engineer', 'Accept-Encoding: br\r\n')}${get('/health')}` +
        'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: y\r\n\r\n',
    )
    const statuses = [...res.raw.toString('latin1').matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1])
    expect(statuses).toEqual(['200', '200', '200', '400'])
    const error = res.raw.toString('latin1').slice(res.raw.toString('latin1').lastIndexOf('HTTP/1.1 400'))
    expect(error).toMatch(/\r\ndate: /i)
    expect(error).toMatch(/\r\nx-request-id: /i)
  })

  it('bytes after a request asking to close are ignored: every request up to it is answered, then the connection closes', async () => {
    const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`
    const res = await rawExchange(
      setup.target,
      `${get('/health')}${get('/api/v2/jobs?limit=3')}${get('/health', 'Connection: close\r\n')}${get('/api/v1')}`,
    )
    const statuses = [...res.raw.toString('latin1').matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1])
    expect(statuses).toEqual(['200', '200', '200'])
  })
})

describe('Host and forwarding headers never get into responses', () => {
  it('a hostile Host, X-Forwarded-Host or X-Forwarded-Proto is not reflected by any endpoint (no cache poisoning)', async () => {
    const problems: string[] = []
    const marker = 'evil-host-7f3a.example'
    for (const path of [
      '/',
      '/api/v1',
      '/api/v2/jobs?limit=2',
      '/api/v2/jobs/no-such-job',
      '/openapi.yaml',
      '/docs',
      '/health',
      '/nowhere',
    ]) {
      const variants: Record<string, string>[] = [
        { host: marker },
        { host: `${marker}:443` },
        { 'x-forwarded-host': marker, 'x-forwarded-proto': 'javascript', forwarded: `host=${marker};proto=https` },
        { 'x-original-url': `/${marker}`, 'x-rewrite-url': `/${marker}` },
      ]
      for (const headers of variants) {
        const res = await rawGet(setup.target, path, headers)
        problems.push(...check(res, `${path} ${JSON.stringify(headers)}`))
        if (res.raw.toString('utf8').includes(marker)) problems.push(`${path}: reflects ${JSON.stringify(headers)}`)
      }
    }
    expect(problems).toEqual([])
  })
})

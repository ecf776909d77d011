/**
 * Path traversal: no request line, in any encoding, reads a file outside the
 * snapshot's public files. Requests go out byte for byte over node:net (fetch
 * would collapse `..` and re-encode). Canaries are planted around and inside
 * the snapshot; none may ever come back, and every answer is a 4xx with the
 * error body or a public document, never a 5xx or a stack trace.
 */
import { readFile } from 'node:fs/promises'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPublicDocument, problemsOf, startHostileServer, Tally, type HostileSetup } from './support/harness.ts'
import { inBatches, rawExchange, rawGet, type RawResponse } from '../../support/raw-http.ts'

let setup: HostileSetup
let realSlug: string
const tally = new Tally()

beforeAll(async () => {
  setup = await startHostileServer()
  const list = await rawGet(setup.target, '/api/v2/jobs?limit=1')
  realSlug = (JSON.parse(list.text) as { data: { slug: string }[] }).data[0]!.slug
})

afterAll(async () => {
  console.log(tally.summary('path traversal'))
  await setup?.close()
})

/** Ways to write "../" : plain, percent-encoded (any case), double-encoded, backslash, overlong UTF-8, fullwidth, with NUL or `;`. */
const DOT_DOT_SLASH = [
  '../',
  '..%2f',
  '..%2F',
  '%2e%2e/',
  '%2e%2e%2f',
  '%2E%2E%2F',
  '.%2e/',
  '%2e./',
  '..\\',
  '..%5c',
  '%2e%2e%5c',
  '%252e%252e%252f',
  '..%252f',
  '%252e%252e/',
  '..%255c',
  '%c0%ae%c0%ae/',
  '%c0%ae%c0%ae%c0%af',
  '..%c0%af',
  '..%c1%9c',
  '..%c0%2f',
  '%e0%80%ae%e0%80%ae%e0%80%af',
  '%f0%80%80%ae%f0%80%80%ae/',
  '..%ef%bc%8f',
  '..%u2215',
  '%u002e%u002e/',
  '..%00/',
  '..;/',
  '....//',
  '.../',
]

const TARGETS = [
  'secret.txt',
  'secret.json',
  'secret',
  'manifest.json',
  'manifest',
  'index/jobs.json',
  'index%2fjobs.json',
  'etc/passwd',
  'etc%2fpasswd',
  'package.json',
  'planted-canary',
  'secret.txt%00',
  'secret.txt%00.json',
  'secret%00.json',
]

const PREFIXES = ['/api/v2/jobs/', '/docs/assets/', '/']
const DEPTHS = [1, 3, 7]

/** Whole request targets: absolute paths, other schemes, UNC and drive paths, CRLF injection. */
const ODD_TARGETS = [
  '/etc/passwd',
  '//etc/passwd',
  '///etc/passwd',
  '/%2fetc%2fpasswd',
  '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
  'file:///etc/passwd',
  'http://127.0.0.1/api/v2/jobs/..%2f..%2f..%2fsecret.txt',
  '\\\\server\\share\\secret.txt',
  '/api/v2/jobs/C:\\Windows\\win.ini',
  '/api/v2/jobs/C:%5cWindows%5cwin.ini',
  '/api/v2/jobs/%5c%5cserver%5cshare',
  '/api/v2/jobs/~',
  '/api/v2/jobs/~root',
  '/api/v2/jobs/.',
  '/api/v2/jobs/..',
  '/api/v2/jobs/...',
  '/api/v2/jobs/%2e',
  '/api/v2/jobs/%2e%2e',
  '/api/v2/jobs/.json',
  '/api/v2/jobs/secret.json',
  '/api/v2/jobs/planted-canary',
  '/api/v2/jobs/planted-canary.json',
  '/api/v2/jobs/planted-canary%00',
  '/api/v2/jobs/planted-canary%2ejson',
  '/api/v2/jobs/PLANTED-CANARY',
  '/api/v2/jobs/%70lanted-canary',
  '/api/v2/jobs/x%0d%0aSet-Cookie:%20a=b',
  '/api/v2/jobs/%00',
  '/api/v2/jobs/%',
  '/api/v2/jobs/%%32%65',
  '/api/v2/jobs/%zz',
  '/api/v2/jobs/%ff%fe',
  '/api/v2/jobs/%ed%a0%80',
  '/api/v2/jobs/a%2f..%2f..%2fsecret',
  '/api/v2/jobs/snapshots%2f..%2fsecret.txt',
  '/api/v1?page=99999',
  '/api/v1?page=99999&limit=25',
  '/openapi.yaml/..%2fmanifest.json',
  '/openapi.yaml%00',
  '/openapi.yaml/../secret.txt',
  '/health/../secret.txt',
  '/docs/assets/..%2f..%2f..%2fsecret.txt',
  '/docs/assets/swagger-ui-bundle.js%00.txt',
  '/docs/assets/%2e%2e%2fswagger-ui.css',
  '/docs/../../../../../../etc/passwd',
  '/api/mcp/../../secret.txt',
  `/api/v2/jobs/${'..%2f'.repeat(200)}etc%2fpasswd`,
  `/api/v2/jobs/${'a'.repeat(4000)}`,
  '*',
]

/** Where another spelling of a public path is redirected: its canonical spelling, nowhere else. */
const CANONICAL_REDIRECT =
  /^\/(api\/(v1|mcp|v2\/(filters|changes)|v2\/(jobs|companies)(\/[^/?#]+)?)|feeds\/jobs\.(rss|atom|json)|openapi\.yaml)(\?[^#]*)?$/

/**
 * Answers a traversal payload may get: a 4xx; 200 only for a public document (the path normalised
 * onto an endpoint); 308 only to an API path's canonical spelling (a payload normalised onto
 * `/api/v2/jobs/`, say, which redirects to `/api/v2/jobs`).
 */
function judge(res: RawResponse, where: string): string[] {
  tally.record(res)
  const problems = problemsOf(res, where, { canaries: setup.canaries })
  if (res.status === 200 && !isPublicDocument(res))
    problems.push(`${where} -> 200 with a body that is not a public document: ${res.text.slice(0, 120)}`)
  const location = res.headers.location
  if (res.status === 308 && !(typeof location === 'string' && CANONICAL_REDIRECT.test(location)))
    problems.push(`${where} -> 308 to ${String(location)}: not an API path's canonical spelling`)
  else if (res.status !== 200 && res.status !== 308 && (res.status < 400 || res.status >= 500))
    problems.push(`${where} -> ${res.status}: expected a 4xx`)
  return problems
}

describe('path traversal', () => {
  it('the planted canaries exist, a real slug is served, the job-shaped canary is not (controls)', async () => {
    for (const [i, file] of setup.canaries.files.entries())
      expect(await readFile(file, 'utf8')).toContain(setup.canaries.tokens[i]!)
    const real = await rawGet(setup.target, `/api/v2/jobs/${realSlug}`)
    expect(real.status).toBe(200)
    expect(JSON.parse(real.text).slug).toBe(realSlug)
    const planted = await rawGet(setup.target, '/api/v2/jobs/planted-canary')
    expect(planted.status).toBe(404)
    expect(judge(planted, 'planted-canary')).toEqual([])
    const pastTheEnd = await rawGet(setup.target, '/api/v1?page=99999&limit=25')
    expect(pastTheEnd.status).toBe(200)
    expect(JSON.parse(pastTheEnd.text).jobs).toEqual([])
  })

  it(`known payloads: every encoding of ../ x ${DEPTHS.length} depths x ${TARGETS.length} targets x ${PREFIXES.length} prefixes, plus odd targets`, async () => {
    const paths: string[] = [...ODD_TARGETS]
    for (const prefix of PREFIXES) {
      for (const step of DOT_DOT_SLASH)
        for (const depth of DEPTHS) for (const target of TARGETS) paths.push(`${prefix}${step.repeat(depth)}${target}`)
    }
    const problems = (await inBatches(paths, 16, async (path) => judge(await rawGet(setup.target, path), path))).flat()
    expect(problems.slice(0, 20)).toEqual([])
    expect(paths.length).toBeGreaterThan(3500)
  })

  it('raw bytes: overlong UTF-8, NUL, CR/LF and high bytes in the request line', async () => {
    const bytes = (...parts: (string | number[])[]) =>
      Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))))
    const lines: Buffer[] = [
      bytes('GET /api/v2/jobs/', [0xc0, 0xae, 0xc0, 0xae, 0xc0, 0xaf], 'secret.txt HTTP/1.1\r\n'),
      bytes('GET /api/v2/jobs/', [0xe0, 0x80, 0xae, 0xe0, 0x80, 0xae], '/secret.txt HTTP/1.1\r\n'),
      bytes('GET /api/v2/jobs/', [0x2e, 0x2e, 0xc0, 0xaf], 'secret.txt HTTP/1.1\r\n'),
      bytes('GET /api/v2/jobs/', [0xff, 0xfe], ' HTTP/1.1\r\n'),
      bytes('GET /api/v2/jobs/secret', [0x00], '.txt HTTP/1.1\r\n'),
      bytes('GET /api/v2/jobs/a\rb HTTP/1.1\r\n'),
      bytes('GET /api/v2/jobs/a\nb HTTP/1.1\r\n'),
      bytes('GET /api/v2/jobs/a\tb HTTP/1.1\r\n'),
      bytes('GET /api/v2/jobs/../../secret.txt HTTP/1.1\r\n'),
      bytes('GET ../../secret.txt HTTP/1.1\r\n'),
      bytes('GET secret.txt HTTP/1.1\r\n'),
      bytes('GET /api/v2/jobs/\u00e9 HTTP/1.1\r\n'),
      bytes('GET /api/v2/jobs/', [0xe2, 0x80, 0xae], 'txt.terces HTTP/1.1\r\n'),
    ]
    const problems: string[] = []
    for (const line of lines) {
      const res = await rawExchange(
        setup.target,
        Buffer.concat([line, Buffer.from(`Host: 127.0.0.1\r\nConnection: close\r\n\r\n`)]),
      )
      problems.push(...judge(res, JSON.stringify(line.toString('latin1'))))
    }
    expect(problems).toEqual([])
  })

  it('generated slugs (fast-check): any mix of dots, slashes, encodings, NUL, overlong UTF-8 and file names', async () => {
    const fragment = fc.constantFrom(
      '..',
      '.',
      '/',
      '\\',
      '%2e',
      '%2E',
      '%2e%2e',
      '%2f',
      '%2F',
      '%5c',
      '%5C',
      '%25',
      '%252e',
      '%252f',
      '%255c',
      '%00',
      '%c0%ae',
      '%c0%af',
      '%c1%9c',
      '%c0%2f',
      '%e0%80%ae',
      '%f0%80%80%ae',
      '%ef%bc%8f',
      '%ff',
      '%fe',
      '%',
      '%zz',
      '%u002e',
      ';',
      '%3b',
      '%3f',
      '%23',
      '?',
      '#',
      '%20',
      '+',
      '%0d%0a',
      '%0a',
      '~',
      'secret',
      'secret.txt',
      'secret.json',
      'manifest.json',
      'index',
      'jobs.json',
      'planted-canary',
      'etc',
      'passwd',
      'v2',
      'jobs',
      'current',
      'snapshots',
      'dist',
      'data',
      'a',
      '-',
      '_',
      'é',
      '€',
      '\u202e',
      ' ',
      realSlug,
    )
    const prefix = fc.constantFrom(
      '/api/v2/jobs/',
      '/api/v2/jobs',
      '/docs/assets/',
      '/docs/',
      '/api/v1/',
      '/',
      '/openapi.yaml',
      '/api/mcp/',
    )
    let runs = 0
    await fc.assert(
      fc.asyncProperty(prefix, fc.array(fragment, { minLength: 1, maxLength: 10 }), async (start, parts) => {
        runs++
        const path = `${start}${parts.join('')}`
        const res = await rawGet(setup.target, path)
        expect(judge(res, JSON.stringify(path))).toEqual([])
        // The only job that can come back is the real one (its slug is among the fragments).
        if (res.status === 200 && res.headers['content-type']?.startsWith('application/json')) {
          const slug = (JSON.parse(res.text) as { slug?: string }).slug
          if (slug !== undefined) expect(slug).toBe(realSlug)
        }
      }),
      { numRuns: 400 },
    )
    expect(runs).toBeGreaterThanOrEqual(400)
  })
})

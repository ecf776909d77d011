/**
 * GET /docs in a real headless Chromium (Debian's /usr/bin/chromium, driven
 * by playwright-core): the rendered reference lists the three REST
 * operations, and the page loads everything from the server itself: no
 * request leaves 127.0.0.1 (no CDN, no validator badge, no fonts). With
 * every operation open, the page shows examples taken from the data (never
 * Swagger UI's invented -9007199254740991), try-it fetches a real job, and a
 * screenshot of the getJob operation with its live response is kept in .artifacts/ for a person to look at.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { brotliDecompressSync } from 'node:zlib'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { buildFixture, startFixtureServer, type FixtureSnapshot } from '../support/fixtures.ts'

const CHROMIUM = '/usr/bin/chromium'
const MISSING_CHROMIUM =
  `Chromium is not installed at ${CHROMIUM}; the /docs test needs Debian's chromium. ` +
  "Install it with `apt-get update && apt-get install -y chromium` (CI's .ci/run does this)."

let fixture: FixtureSnapshot
let server: RunningServer
let browser: Browser | undefined

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 60, companies: 12 })
  server = await startFixtureServer(fixture.distDir)
  if (existsSync(CHROMIUM)) {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
  }
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await fixture?.cleanup()
})

const SCREENSHOT = path.resolve('.artifacts/docs.jpeg')

interface DocsVisit {
  context: BrowserContext
  page: Page
  requested: string[]
  blocked: string[]
  /** Script errors, CSP violations, and console errors such as a failed favicon load. */
  pageErrors: string[]
  /** Every response the page received with a status of 400 or more. */
  failedResponses: string[]
}

/** Opens /docs with every request outside the test server refused and recorded. */
async function visitDocs(): Promise<DocsVisit> {
  // Not a skip: a machine without Chromium must fail loudly, with the fix in the message.
  if (!browser) throw new Error(MISSING_CHROMIUM)
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const visit: DocsVisit = {
    context,
    page: await context.newPage(),
    requested: [],
    blocked: [],
    pageErrors: [],
    failedResponses: [],
  }
  const serverPort = new URL(server.url).port
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url())
    visit.requested.push(url.href)
    if (url.hostname === '127.0.0.1' && url.port === serverPort) await route.continue()
    else {
      visit.blocked.push(url.href)
      await route.abort('blockedbyclient')
    }
  })
  const { page } = visit
  page.on('pageerror', (error) => visit.pageErrors.push(error.message))
  page.on('console', (message) => {
    if (message.type() === 'error') visit.pageErrors.push(message.text())
  })
  page.on('request', (req) => {
    const url = new URL(req.url())
    if (url.protocol !== 'data:' && url.protocol !== 'blob:' && url.hostname !== '127.0.0.1')
      visit.blocked.push(url.href)
  })
  page.on('response', (response) => {
    if (response.status() >= 400) visit.failedResponses.push(`${response.status()} ${response.url()}`)
  })
  const response = await page.goto(`${server.url}/docs`, { waitUntil: 'load' })
  expect(response?.status()).toBe(200)
  // Swagger UI fetches /openapi.yaml and renders one block per operation.
  await waitForCount(page, '.opblock-summary-path', 3)
  return visit
}

/**
 * Waits until `selector` matches at least `count` elements. A function, not a
 * string: Playwright evaluates a string predicate with eval when it has to
 * poll, which the page's CSP (no 'unsafe-eval') refuses; under load, when the
 * first check came too early, that failed the test.
 */
async function waitForCount(page: Page, selector: string, count: number): Promise<void> {
  await page.waitForFunction(
    ([css, least]) =>
      (
        globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
      ).document.querySelectorAll(css).length >= least,
    [selector, count] as const,
    // Opening every operation at once re-renders Swagger UI dozens of times: ~5 s alone, over 30 s once in CI
    // with other test files on both cores. Within the test's own 60 s.
    { timeout: 45_000 },
  )
}

/** The text a reader sees, without the zero-width spaces Swagger UI puts in paths. */
async function visibleText(page: Page): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, the text a reader sees, not the DOM property.
  return (await page.innerText('body')).replace(/\u200b/g, '')
}

describe('/docs in a real browser', () => {
  it('renders the three REST endpoints from local files only, with no console errors', async () => {
    const { context, page, requested, blocked, pageErrors, failedResponses } = await visitDocs()
    try {
      const paths = await page.$$eval('.opblock-summary-path', (nodes) =>
        nodes.map((n) => (n.getAttribute('data-path') ?? n.textContent ?? '').replace(/\u200b/g, '')),
      )
      expect(paths).toEqual(expect.arrayContaining(['/api/v1', '/api/v2/jobs', '/api/v2/jobs/{slug}']))
      const text = await visibleText(page)
      for (const p of ['/api/v1', '/api/v2/jobs', '/api/v2/jobs/{slug}']) expect(text).toContain(p)
      expect(text).toContain('jobsnap job listings API')
      // Text in angle brackets is shown, not swallowed as an HTML tag.
      for (const shown of ['facets=<filter names>', 'since=<snapshot id>', 'company=<slug,...>'])
        expect(text).toContain(shown)
      // The document names the public URL first (for generated clients); try-it asks this server, the
      // only origin the page may connect to.
      const servers = page.locator('.servers select')
      await expect.poll(() => servers.inputValue()).toBe('/')
      expect(await servers.locator('option').allTextContents()).toEqual([
        expect.stringContaining('https://jobsnap.example'),
        expect.stringContaining('This server'),
      ])

      expect(
        requested.some((u) => u.endsWith('/openapi.yaml')),
        'the page loaded the spec from the server',
      ).toBe(true)
      expect(blocked, 'requests that tried to leave 127.0.0.1').toEqual([])
      expect(failedResponses, 'responses of 400 or more (a missing favicon would be one)').toEqual([])
      expect(pageErrors, 'script errors, CSP violations and console errors').toEqual([])
    } finally {
      await context.close()
    }
  })

  it('shows examples from the data, never invented extremes, and try-it fetches a real job', async () => {
    const newest = (await (await fetch(`${server.url}/api/v2/jobs?limit=1`)).json()) as {
      data: { slug: string; title: string }[]
    }
    const slug = newest.data[0]!.slug
    const { context, page, blocked, pageErrors, failedResponses } = await visitDocs()
    try {
      // Open every operation, so every parameter, example and response schema is on the page.
      const summaries = page.locator('.opblock-summary-control')
      const count = await summaries.count()
      expect(count).toBeGreaterThan(10)
      // One click each inside the page: Playwright's own click scrolls and waits per element, ~2 s each here.
      await page.$$eval('.opblock-summary-control', (buttons) => {
        for (const button of buttons) (button as unknown as { click(): void }).click()
      })
      await waitForCount(page, '.opblock.is-open .opblock-body', count)

      const text = await visibleText(page)
      // What Swagger UI invents for an integer with no bounds and no example.
      expect(text).not.toContain('9007199254740991')
      expect(text).not.toContain('ffffffff-ffff')
      // The example job of getJob is the newest job the server holds.
      expect(text).toContain(slug)

      // Try it (on from the start): the slug field holds the example, and Execute gets that job from this server.
      const getJob = page.locator('#operations-v2-getJob')
      await expect.poll(() => getJob.locator('input[placeholder="slug"]').inputValue()).toBe(slug)
      await getJob.locator('.execute').click()
      const status = getJob.locator('.live-responses-table tr.response td.response-col_status').first()
      await expect.poll(() => status.textContent(), { timeout: 15_000 }).toBe('200')
      const body = await getJob.locator('.live-responses-table tr.response .microlight').first().textContent()
      expect(body).toContain(newest.data[0]!.title)

      mkdirSync(path.dirname(SCREENSHOT), { recursive: true })
      // The getJob block only, with its live response: a full-page capture of every open operation is ~12 MB.
      await getJob.screenshot({ path: SCREENSHOT, type: 'jpeg', quality: 80 })
      expect(statSync(SCREENSHOT).size, `screenshot at ${SCREENSHOT}`).toBeGreaterThan(10_000)

      expect(blocked, 'requests that tried to leave 127.0.0.1').toEqual([])
      expect(failedResponses).toEqual([])
      expect(pageErrors).toEqual([])
    } finally {
      await context.close()
    }
  }, 90_000)
})

describe('/docs files over HTTP', () => {
  it('are sent compressed on request, with a strong ETag that If-None-Match (or *) turns into 304', async () => {
    const url = `${server.url}/docs/assets/swagger-ui-bundle.js`
    const plain = await fetch(url, { headers: { 'accept-encoding': 'identity' } })
    const identity = Buffer.from(await plain.arrayBuffer())
    const etag = plain.headers.get('etag')!
    expect(etag).toMatch(/^"[!#-~]+"$/)
    expect(plain.headers.get('content-security-policy')).toContain("script-src 'self'")
    // Read as raw bytes: node:http leaves the body compressed.
    const compressed = await new Promise<{ encoding?: string; body: Buffer }>((resolve, reject) => {
      http
        .get(url, { headers: { 'accept-encoding': 'br' } }, (response) => {
          const chunks: Buffer[] = []
          response.on('data', (chunk: Buffer) => chunks.push(chunk))
          response.on('end', () =>
            resolve({ encoding: response.headers['content-encoding'], body: Buffer.concat(chunks) }),
          )
        })
        .once('error', reject)
    })
    expect(compressed.encoding).toBe('br')
    expect(compressed.body.length).toBeLessThan(identity.length / 2)
    expect(brotliDecompressSync(compressed.body).equals(identity)).toBe(true)
    for (const tag of [etag, '*']) {
      const again = await fetch(url, { headers: { 'accept-encoding': 'identity', 'if-none-match': tag } })
      expect(again.status, tag).toBe(304)
    }
  })
})

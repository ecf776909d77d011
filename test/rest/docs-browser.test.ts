/**
 * GET /docs in a real headless Chromium (Debian's /usr/bin/chromium, driven
 * by playwright-core): the rendered reference lists the three REST
 * operations, and the page loads everything from the server itself: no
 * request leaves 127.0.0.1 (no CDN, no validator badge, no fonts).
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
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

describe('/docs in a real browser', () => {
  it('renders the three REST endpoints from local files only', async () => {
    // Not a skip: a machine without Chromium must fail loudly, with the fix in the message.
    if (!browser) throw new Error(MISSING_CHROMIUM)
    const context = await browser.newContext()
    const requested: string[] = []
    const blocked: string[] = []
    const pageErrors: string[] = []
    // Every request the page makes is seen here; anything not for the test server is refused and recorded.
    await context.route('**/*', async (route) => {
      const url = new URL(route.request().url())
      requested.push(url.href)
      if (url.hostname === '127.0.0.1' && url.port === new URL(server.url).port) await route.continue()
      else {
        blocked.push(url.href)
        await route.abort('blockedbyclient')
      }
    })
    const page = await context.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text())
    })
    page.on('request', (req) => {
      const url = new URL(req.url())
      if (url.protocol !== 'data:' && url.protocol !== 'blob:' && url.hostname !== '127.0.0.1') blocked.push(url.href)
    })

    try {
      const response = await page.goto(`${server.url}/docs`, { waitUntil: 'load' })
      expect(response?.status()).toBe(200)
      // Swagger UI fetches /openapi.yaml and renders one block per operation.
      await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 })
      await page.waitForFunction("document.querySelectorAll('.opblock-summary-path').length >= 3", undefined, {
        timeout: 30_000,
      })
      const paths = await page.$$eval('.opblock-summary-path', (nodes) =>
        nodes.map((n) => (n.getAttribute('data-path') ?? n.textContent ?? '').replace(/\u200b/g, '')),
      )
      expect(paths).toEqual(expect.arrayContaining(['/api/v1', '/api/v2/jobs', '/api/v2/jobs/{slug}']))
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, the text a reader sees, not the DOM property.
      const text = (await page.innerText('body')).replace(/\u200b/g, '')
      for (const path of ['/api/v1', '/api/v2/jobs', '/api/v2/jobs/{slug}']) expect(text).toContain(path)
      expect(text).toContain('jobsnap job listings API')

      expect(
        requested.some((u) => u.endsWith('/openapi.yaml')),
        'the page loaded the spec from the server',
      ).toBe(true)
      expect(blocked, 'requests that tried to leave 127.0.0.1').toEqual([])
      expect(pageErrors, 'script errors and CSP violations').toEqual([])
    } finally {
      await context.close()
    }
  })
})

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance,
 * server scenarios) against a real server on loopback. The suite needs Node 22,
 * which npx fetches from the npm registry (the `node` package) the first time.
 * Scenarios that call the suite's own test tools, prompts and resources, or
 * capabilities a stateless read-only server does not offer, are listed with
 * the reason in conformance-baseline.yml; any other failure, and any listed
 * scenario that starts passing, fails this test. The server runs with a large
 * MCP bucket: the suite makes its requests back to back.
 */
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { buildFixture, type FixtureSnapshot, startFixtureServer } from '../support/fixtures.ts'

const BASELINE = fileURLToPath(new URL('./conformance-baseline.yml', import.meta.url))
const SUITE = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
)
/** The scenarios that apply, each of which must pass. */
const APPLICABLE = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'prompts-list',
  'dns-rebinding-protection',
]

let fixture: FixtureSnapshot
let server: RunningServer

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 200, companies: 30, seed: 5 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_MCP_BURST: 100_000, JOBSNAP_MCP_RATE: 10_000 })
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

function runSuite(): Promise<{ code: number; output: string }> {
  const args = ['-y', '-p', 'node@22', '--', 'node', SUITE, 'server', '--url', `${server.url}/api/mcp`]
  return new Promise((resolve) => {
    execFile(
      'npx',
      [...args, '--expected-failures', BASELINE],
      { timeout: 240_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, output: stripVTControlCharacters(`${stdout}${stderr}`) })
      },
    )
  })
}

describe('MCP conformance suite, server scenarios', () => {
  it('passes every applicable scenario; the rest fail only as the baseline says', { timeout: 300_000 }, async () => {
    const { code, output } = await runSuite()
    for (const scenario of APPLICABLE)
      expect(output, scenario).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`))
    expect(output).toContain('Baseline check passed')
    expect(code, output.slice(-3000)).toBe(0)
  })
})

/**
 * What the MCP side offers and accepts follows what is live, as REST does: an
 * employer whose jobs are all closed is gone (get_company, its resource, slug
 * completion, get_market_stats), a category of the taxonomy that no job has
 * and a headquarters country no employer has are tool errors naming what
 * exists (never a silent empty result), and a one-sided salary reads as a
 * floor or a ceiling. Plus the JSON-RPC envelope checks the SDK would answer
 * with a misleading -32700, and a "__proto__" argument the SDK's own parse
 * would drop. Real server on loopback, the SDK's Client, raw fetch.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveCountry } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { buildFixture, type FixtureSnapshot, type RawJob } from '../support/fixtures.ts'
import { startFixtureServer } from '../support/fixtures.ts'
import {
  callError,
  callInvalid,
  callOk,
  connectMcp,
  expectJsonRpcError,
  type McpSession,
  postMcp,
  readDataset,
} from './support/mcp.ts'

let fixture: FixtureSnapshot
let server: RunningServer
let mcp: McpSession
/** The employer whose every job the fixture closed. */
let goneSlug: string
/** Jobs whose salary the fixture made one-sided. */
let floorOnly: RawJob
let ceilingOnly: RawJob
/** A category all of whose jobs expire between the build and AFTER_EXPIRY. */
let expiringCategory: string
const AFTER_EXPIRY = Date.parse('2026-12-01T00:00:01Z')

beforeAll(async () => {
  let goneCompanyId: string | undefined
  fixture = await buildFixture({
    jobs: 300,
    companies: 40,
    seed: 11,
    prefix: 'mcp-live-vocabulary',
    editJobs: (jobs) => {
      // No job in the legal category: the taxonomy knows it, this snapshot does not.
      for (const job of jobs) if (job.category === 'legal') job.category = 'engineering'
      // Every job of another category expires after the build, before AFTER_EXPIRY.
      expiringCategory = jobs.find((job) => job.status === 'live' && job.category !== 'engineering')!.category as string
      for (const job of jobs) if (job.category === expiringCategory) job.expires_at = '2026-12-01T00:00:00.000Z'
      goneCompanyId = jobs.find((job) => job.status === 'live')!.company_id as string
      for (const job of jobs) if (job.company_id === goneCompanyId) job.status = 'closed'
      const paid = jobs.filter(
        (job) =>
          job.status === 'live' && job.company_id !== goneCompanyId && job.salary_min !== undefined && !job.expires_at,
      )
      floorOnly = paid[0]!
      delete floorOnly.salary_max
      ceilingOnly = paid[1]!
      delete ceilingOnly.salary_min
    },
  })
  const { companies } = await readDataset(fixture.dataDir)
  goneSlug = companies.find((company) => company.id === goneCompanyId)!.slug
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000, JOBSNAP_MCP_BURST: 100_000 })
  mcp = await connectMcp(server.url)
})

afterAll(async () => {
  await mcp?.close()
  await server?.close()
  await fixture?.cleanup()
})

describe('an employer with no live job left', () => {
  it('is not found by REST, get_company or its resource', async () => {
    expect((await fetch(`${server.url}/api/v2/companies/${goneSlug}`)).status).toBe(404)
    expect(await callError(mcp, 'get_company', { slug: goneSlug })).toContain('No employer with a live job')
    await expect(mcp.client.readResource({ uri: `jobsnap://companies/${goneSlug}` })).rejects.toThrow(
      /No employer with a live job/,
    )
  })

  it('is not offered by slug completion', async () => {
    const { completion } = await mcp.client.complete({
      ref: { type: 'ref/resource', uri: 'jobsnap://companies/{slug}' },
      argument: { name: 'slug', value: '' },
    })
    const rest = (await (await fetch(`${server.url}/api/v2/companies?limit=100`)).json()) as { total: number }
    expect(completion.values, 'every employer with a live job, and only those').toHaveLength(rest.total)
    expect(completion.values).not.toContain(goneSlug)
  })

  it('is not counted by get_market_stats, which counts what /api/v2/companies lists', async () => {
    const rest = (await (await fetch(`${server.url}/api/v2/companies?limit=1`)).json()) as { total: number }
    const { structured } = await callOk<{ employers_tracked: number }>(mcp, 'get_market_stats', {})
    expect(structured.employers_tracked).toBe(rest.total)
    const { structured: found } = await callOk<{ total: number }>(mcp, 'search_companies', {})
    expect(found.total).toBe(rest.total)
  })
})

describe('values no live job has', () => {
  it('counts as live what is live now: a category whose jobs all expired since the build is refused and not offered', async () => {
    await callOk(mcp, 'search_jobs', { category: [expiringCategory] })
    const later = await startFixtureServer(
      fixture.distDir,
      { JOBSNAP_REST_LIMIT: 100_000, JOBSNAP_MCP_BURST: 100_000 },
      () => AFTER_EXPIRY,
    )
    const session = await connectMcp(later.url)
    try {
      expect(await callError(session, 'search_jobs', { category: [expiringCategory] })).toContain(
        'is not a value any live job has',
      )
      const { completion } = await session.client.complete({
        ref: { type: 'ref/prompt', name: 'find_jobs' },
        argument: { name: 'category', value: '' },
      })
      expect(completion.values).not.toContain(expiringCategory)
      expect(completion.values).toContain('engineering')
    } finally {
      await session.close()
      await later.close()
    }
  })

  it('refuses a taxonomy category no job has, naming categories that exist', async () => {
    for (const [tool, args] of [
      ['search_jobs', { category: ['legal'] }],
      ['search_jobs', { category: ['engineering', 'Legal'] }],
      ['get_salary_benchmarks', { category: 'legal' }],
    ] as const) {
      const text = await callError(mcp, tool, args)
      expect(text, tool).toMatch(/category: "legal" is not a value any live job has/i)
      expect(text, tool).toMatch(/Closest known values: "[a-z_]+"/)
      expect(text.split('Closest')[1], 'suggests only live categories').not.toContain('"legal"')
    }
    await callOk(mcp, 'search_jobs', { category: ['engineering'] })
  })

  it('does not offer it in the find_jobs prompt: completion and suggestions', async () => {
    const { completion } = await mcp.client.complete({
      ref: { type: 'ref/prompt', name: 'find_jobs' },
      argument: { name: 'category', value: '' },
    })
    expect(completion.values).toContain('engineering')
    expect(completion.values).not.toContain('legal')
    await expect(mcp.client.getPrompt({ name: 'find_jobs', arguments: { category: 'legal' } })).rejects.toThrow(
      /not a value any live job has/,
    )
  })

  it('refuses a headquarters country no employer with a live job has, naming ones that exist', async () => {
    const { companies } = await readDataset(fixture.dataDir)
    expect(
      companies.some((company) => company.country && resolveCountry(company.country) === 'UG'),
      'no employer in the fixture is based in Uganda',
    ).toBe(false)
    const text = await callError(mcp, 'search_companies', { country: 'Uganda' })
    expect(text).toContain('no employer with a live job has its headquarters in "Uganda"')
    expect(text).toMatch(/Closest headquarters countries: "[^"]+"/)
    // A country some employer with a live job is based in still lists them.
    const listed = (await (await fetch(`${server.url}/api/v2/companies?limit=100`)).json()) as {
      data: { country?: string }[]
    }
    const based = listed.data.find((company) => company.country)!.country!
    const { structured } = await callOk<{ total: number }>(mcp, 'search_companies', { country: based })
    expect(structured.total).toBeGreaterThan(0)
  })
})

describe('a query with more different words than a search takes', () => {
  it('is a tool error naming the argument, never a silently cut search', async () => {
    const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima'
    await callOk(mcp, 'search_jobs', { query: words })
    const message = await callInvalid(mcp, 'search_jobs', { query: `${words} zzzzqqqq` })
    expect(message).toContain('query: must have at most 12 different words')
    expect(await callInvalid(mcp, 'search_companies', { query: `${words} mike` })).toContain('at most 12')
  })
})

describe('min_work_life_score 0', () => {
  it('asks for no minimum: employers without a score stay, as with no argument', async () => {
    const all = await callOk<{ total: number }>(mcp, 'search_jobs', {})
    const zero = await callOk<{ total: number }>(mcp, 'search_jobs', { min_work_life_score: 0 })
    expect(zero.structured.total).toBe(all.structured.total)
    const one = await callOk<{ total: number }>(mcp, 'search_jobs', { min_work_life_score: 1 })
    expect(one.structured.total, 'the fixture has employers without a score').toBeLessThan(all.structured.total)
  })
})

describe('a one-sided salary', () => {
  it('reads as a floor or a ceiling, never as the salary itself', async () => {
    const floor = await callOk<{ salary?: string }>(mcp, 'get_job', { slug: floorOnly.slug })
    expect(floor.structured.salary).toMatch(/^from \S/)
    const ceiling = await callOk<{ salary?: string }>(mcp, 'get_job', { slug: ceilingOnly.slug })
    expect(ceiling.structured.salary).toMatch(/^up to \S/)
  })
})

describe('JSON-RPC messages the SDK would call a parse error', () => {
  const invalid: [string, unknown, RegExp][] = [
    [
      'a response with both result and error',
      { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } },
      /"result" or "error", not both/,
    ],
    ['a request with a result', { jsonrpc: '2.0', id: 2, method: 'ping', result: {} }, /not "result"/],
    ['a request with a member of its own', { jsonrpc: '2.0', id: 3, method: 'ping', extra: 1 }, /not "extra"/],
  ]
  for (const [name, message, wording] of invalid)
    it(`answers ${name} with 400 and -32600, its id kept`, async () => {
      const response = await postMcp(server.url, message)
      expect(response.status).toBe(400)
      const body = expectJsonRpcError(response.text, -32600)
      expect(body.error.message).toMatch(wording)
      expect(body.id).toBe((message as { id: number }).id)
    })
})

describe('an integer id JSON numbers cannot hold exactly', () => {
  it('is refused saying why, since it could not be echoed back as sent', async () => {
    const response = await postMcp(server.url, '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}')
    expect(response.status).toBe(400)
    expect(expectJsonRpcError(response.text, -32600).error.message).toContain('2^53 - 1')
  })
})

describe('a "__proto__" argument', () => {
  it('is an unknown argument, a tool error however it is spelled in the JSON; elsewhere in params, -32602', async () => {
    for (const spelled of ['"__proto__"', '"\\u005f_proto__"']) {
      const response = await postMcp(
        server.url,
        `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_job","arguments":{"slug":"x",${spelled}:{"a":1}}}}`,
      )
      const body = JSON.parse(response.text) as { id: number; result?: CallToolResult; error?: unknown }
      expect(body.error, response.text).toBeUndefined()
      expect(body.id).toBe(7)
      expect(body.result?.isError).toBe(true)
      expect(body.result?.structuredContent).toBeUndefined()
      const text = (body.result!.content[0] as { text: string }).text
      expect(text).toContain('Invalid arguments for get_job: unknown argument "__proto__" (get_job takes slug)')
    }
    // An unknown tool is answered as one, whatever its arguments hold.
    const unknownTool = await postMcp(
      server.url,
      '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"delete_job","arguments":{"__proto__":1}}}',
    )
    expect(expectJsonRpcError(unknownTool.text, -32602).error.message).toMatch(/Unknown tool "delete_job"/)
    // Not an argument: the params themselves are malformed.
    const inParams = await postMcp(
      server.url,
      '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_job","arguments":{"slug":"x"},"__proto__":1}}',
    )
    expect(expectJsonRpcError(inParams.text, -32602).error.message).toContain('"__proto__" (in params)')
    const prompt = await postMcp(
      server.url,
      '{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"find_jobs","arguments":{"__proto__":"x"}}}',
    )
    expect(expectJsonRpcError(prompt.text, -32602).error.message).toContain('"__proto__" (in params.arguments)')
    // Another unknown argument gets the same answer through the SDK's Client.
    expect(await callInvalid(mcp, 'get_job', { slug: 'x', other: 1 })).toContain('unknown argument "other"')
  })
})

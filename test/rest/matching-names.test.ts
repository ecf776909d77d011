/**
 * How names are matched, over a real server: accents do not matter to `q`
 * (jobs and companies) nor to `country`; a country answers to its own name
 * ("Deutschland") and the UK to its nations; a country the continents list
 * places in both Europe and Asia (Russia) matches jobs open to remote work
 * from either. Oracles: the same queries spelt the plain way, and the pure
 * place keys the filters use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveCountry, textTerms } from '../../core/index.ts'
import { placeKeysForCountry, type RunningServer } from '../../runtime/index.ts'
import { buildFixture, type FixtureSnapshot, startFixtureServer } from '../support/fixtures.ts'

let fixture: FixtureSnapshot
let server: RunningServer
let accentedSlug: string
let dcSlug: string
let csharpSlug: string

beforeAll(async () => {
  fixture = await buildFixture({
    jobs: 200,
    companies: 30,
    seed: 5,
    prefix: 'matching-names',
    editJobs: (jobs) => {
      const [job, dc, csharp] = jobs.filter((candidate) => candidate.status === 'live' && !candidate.expires_at)
      job!.title = 'Ingénieure logiciel à Zürich'
      accentedSlug = job!.slug
      dc!.title = 'Brand Designer, Washington D.C.'
      dcSlug = dc!.slug
      csharp!.title = 'Senior C# Engineer'
      csharpSlug = csharp!.slug
    },
  })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

async function slugsFor(query: string): Promise<{ total: number; slugs: string[] }> {
  const response = await fetch(`${server.url}/api/v2/jobs?limit=100&${query}`)
  expect(response.status, query).toBe(200)
  const body = (await response.json()) as { total: number; data: { slug: string }[] }
  return { total: body.total, slugs: body.data.map((job) => job.slug) }
}

describe('accents do not matter to q', () => {
  it('finds an accented word typed with or without its accents, whole, as a prefix or one typo away', async () => {
    for (const q of [
      'zurich',
      'Zürich',
      'ZURICH',
      'zur',
      'ingenieure',
      'ingénieure',
      'ingen',
      'ingenieuer',
      'logiciel',
    ])
      expect((await slugsFor(`q=${encodeURIComponent(q)}`)).slugs, q).toContain(accentedSlug)
  })

  it('folds the terms of both sides the same way', () => {
    expect(textTerms('Brasília São Paulo Zürich Côte')).toEqual(['brasilia', 'sao', 'paulo', 'zurich', 'cote'])
    // Letters that are not a base letter plus an accent stay; so do the vowel signs of other scripts.
    expect(textTerms('Ørsted Łódź straße')).toEqual(['ørsted', 'łodz', 'straße'])
    expect(textTerms('किताब काम कम')).toEqual(['किताब', 'काम', 'कम'])
    expect(textTerms('한국어 日本語')).toEqual(['한국어', '日本語'])
    // A lone combining mark is no word.
    expect(textTerms('hello \u0301 world')).toEqual(['hello', 'world'])
  })
})

describe('names with symbols', () => {
  it('keeps C#, F#, C++ and .NET words of their own, so c# is not the letter c of Washington D.C.', () => {
    expect(textTerms('C# and F# developer, C++ too')).toEqual([
      'csharp',
      'and',
      'fsharp',
      'developer',
      'cplusplus',
      'too',
    ])
    expect(textTerms('ASP.NET Core on .NET 8')).toEqual(['asp', 'dotnet', 'core', 'on', 'dotnet', '8'])
    expect(textTerms('Washington D.C.')).toEqual(['washington', 'd', 'c'])
    expect(textTerms('abc#def c#sharp')).toEqual(['abc', 'def', 'c', 'sharp'])
    // A version after the name is a word of its own; a domain ending in .net is no .NET.
    expect(textTerms('C++17, C#10 and .NET8')).toEqual(['cplusplus', '17', 'csharp', '10', 'and', 'dotnet', '8'])
    expect(textTerms('jobs@example.net or acme.net')).toEqual(['jobs', 'example', 'net', 'or', 'acme', 'net'])
  })

  it('matches over HTTP: c# finds the C# job, not the Washington D.C. one', async () => {
    const csharp = await slugsFor(`q=${encodeURIComponent('c#')}`)
    expect(csharp.slugs).toContain(csharpSlug)
    expect(csharp.slugs).not.toContain(dcSlug)
    expect((await slugsFor(`q=${encodeURIComponent('washington d.c.')}`)).slugs).toContain(dcSlug)
  })
})

describe('country names', () => {
  it("resolves a country's own name, the UK's nations and names typed without accents", () => {
    for (const [name, code] of [
      ['Deutschland', 'DE'],
      ['España', 'ES'],
      ['espana', 'ES'],
      ['Brasil', 'BR'],
      ["Cote d'Ivoire", 'CI'],
      ['Scotland', 'GB'],
      ['Wales', 'GB'],
      ['Northern Ireland', 'GB'],
      ['Korea', 'KR'],
      ['Türkiye', 'TR'],
      ['turkiye', 'TR'],
      ['Georgia', 'GE'],
    ] as const)
      expect(resolveCountry(name), name).toBe(code)
  })

  it('filters the same for a nation of the UK or a native name as for the code', async () => {
    const gb = await slugsFor('country=GB')
    expect(gb.total).toBeGreaterThan(0)
    expect(await slugsFor('country=Scotland')).toEqual(gb)
    const de = await slugsFor('country=DE')
    expect(await slugsFor('country=Deutschland')).toEqual(de)
  })

  it('places a country in Europe and Asia when it is in both, and no second continent otherwise', () => {
    expect(placeKeysForCountry('RU')).toEqual(
      expect.arrayContaining([expect.stringMatching(/EU$/), expect.stringMatching(/AS$/)]),
    )
    expect(placeKeysForCountry('TR').filter((key) => /EU$|AS$/.test(key))).toHaveLength(2)
    // Denmark's Greenland and Egypt's Sinai do not make a job open to North America or Asia one for them.
    expect(placeKeysForCountry('DK').some((key) => /NA$/.test(key))).toBe(false)
    expect(placeKeysForCountry('EG').some((key) => /AS$/.test(key))).toBe(false)
  })
})

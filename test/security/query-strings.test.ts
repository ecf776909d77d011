/**
 * Absurd query strings: every v2 parameter (and unknown ones) with any value
 * fast-check can think of, hostile numbers, repeated keys, array notation,
 * unicode and broken percent-encoding, 10,000 parameters and 100 KB values.
 * v2 answers 200 or a 400 naming a real parameter; v1 always 200; oversize
 * requests a 431 with the error body; never a 5xx or a stack trace.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { V2_LIST_PARAMS } from '../../core/index.ts'
import { problemsOf, startHostileServer, Tally, type HostileSetup } from './support/harness.ts'
import { rawGet, type RawResponse } from '../../support/raw-http.ts'

let setup: HostileSetup
let liveTotal: number
const tally = new Tally()

const V2_PARAMS = Object.keys(V2_LIST_PARAMS)
/** The v2 parameters that can be invalid (the open vocabularies never are). */
const VALIDATED = [
  'page',
  'limit',
  'salary_min',
  'salary_max',
  'posted_after',
  'work_arrangement',
  'sort',
  'q',
  'facets',
  'cursor',
]
const INTEGER_PARAMS = ['page', 'limit', 'salary_min', 'salary_max', 'posted_after'] as const
const NON_NEGATIVE = new Set(['salary_min', 'salary_max', 'posted_after'])

/** Numbers as attackers and confused clients write them. */
const NUMERIC_LITERALS = [
  '1e309',
  '-1e309',
  '0x10',
  '-0',
  '+0',
  'NaN',
  'Infinity',
  '-Infinity',
  '1.5',
  '1.0',
  '.5',
  '5.',
  '9007199254740993',
  '9007199254740991',
  '-9007199254740991',
  `1${'0'.repeat(400)}`,
  '+5',
  ' 7 ',
  '\t8\t',
  '00012',
  '-1',
  '0',
  '1e3',
  '0b1',
  '0o7',
  '1_000',
  '１２',
  '٣',
  '½',
  '1,2',
  '1 2',
  'true',
  'null',
  'undefined',
  '[]',
  '{}',
  '\u00001',
  '5\u200b',
  '\u00a05',
  '',
  '   ',
]

/** Percent-encodes every byte but the unreserved ones (lone surrogates become U+FFFD, as UTF-8 must). */
function pct(value: string): string {
  let out = ''
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte)
    out += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

function record(res: RawResponse, where: string): string[] {
  tally.record(res)
  return problemsOf(res, where, { canaries: setup.canaries })
}

/** Problems with a v2 answer: 200 with a well-formed page, or 400 naming a validated parameter. */
function v2Problems(res: RawResponse, where: string): string[] {
  const problems = record(res, where)
  if (res.status === 200) {
    const body = JSON.parse(res.text) as {
      data: unknown[]
      page: number
      limit: number
      total: number
      has_more: boolean
    }
    if (!Array.isArray(body.data) || !Number.isSafeInteger(body.page) || body.page < 1)
      problems.push(`${where}: bad page ${res.text.slice(0, 80)}`)
    if (!(body.limit >= 1 && body.limit <= 100) || body.data.length > body.limit)
      problems.push(`${where}: limit ${body.limit} with ${body.data.length} items`)
    if (!(body.total >= 0 && body.total <= liveTotal)) problems.push(`${where}: total ${body.total}`)
  } else if (res.status === 400) {
    const error = (JSON.parse(res.text) as { error: { field?: string; message: string } }).error
    if (!VALIDATED.includes(error.field ?? '')) problems.push(`${where}: 400 names field ${String(error.field)}`)
    else if (!error.message.includes(error.field!)) problems.push(`${where}: 400 message does not name ${error.field}`)
  } else if (!(res.status === 431 && where.length > 15_000)) {
    problems.push(`${where}: status ${res.status}, expected 200 or 400`)
  }
  return problems
}

beforeAll(async () => {
  setup = await startHostileServer()
  liveTotal = (JSON.parse((await rawGet(setup.target, '/api/v2/jobs?limit=1')).text) as { total: number }).total
})

afterAll(async () => {
  console.log(tally.summary('query strings'))
  await setup?.close()
})

describe('hostile numbers in every integer parameter', () => {
  /**
   * docs/api.md: Parameters (v2): digits only (sign and surrounding blanks allowed); an integer too large to
   * hold is still an integer, clamped; salaries and posted_after not negative; blank = absent.
   */
  function expectedStatus(param: string, literal: string): 200 | 400 {
    const trimmed = literal.trim()
    if (trimmed === '') return 200
    if (!/^[+-]?\d+$/.test(trimmed)) return 400
    if (NON_NEGATIVE.has(param) && Number(trimmed) < 0) return 400
    return 200
  }

  it(`v2: ${INTEGER_PARAMS.length} parameters x ${NUMERIC_LITERALS.length} literals get exactly the documented 200 or 400`, async () => {
    const problems: string[] = []
    for (const param of INTEGER_PARAMS) {
      for (const literal of NUMERIC_LITERALS) {
        const where = `/api/v2/jobs?${param}=${pct(literal)}`
        const res = await rawGet(setup.target, where)
        problems.push(...v2Problems(res, where))
        const expected = expectedStatus(param, literal)
        if (res.status !== expected) problems.push(`${where}: ${res.status}, expected ${expected}`)
        if (res.status === 400 && (JSON.parse(res.text) as { error: { field?: string } }).error.field !== param)
          problems.push(`${where}: 400 does not name ${param}`)
        if (res.status === 200 && param === 'page') {
          const page = (JSON.parse(res.text) as { page: number }).page
          const asked = Math.min(Number.MAX_SAFE_INTEGER, Number(literal.trim() || '1'))
          if (page !== Math.max(1, asked)) problems.push(`${where}: page ${page}`)
        }
      }
    }
    expect(problems).toEqual([])
  })

  it('v1: the same literals in page and limit always get 200 with a page >= 1 and a limit <= 100', async () => {
    const problems: string[] = []
    for (const param of ['page', 'limit']) {
      for (const literal of NUMERIC_LITERALS) {
        const where = `/api/v1?${param}=${pct(literal)}`
        const res = await rawGet(setup.target, where)
        problems.push(...record(res, where))
        if (res.status !== 200) problems.push(`${where}: ${res.status}`)
        else {
          const body = JSON.parse(res.text) as { page: number; jobs: unknown[] }
          if (!(body.page >= 1) || body.jobs.length > 100)
            problems.push(`${where}: page ${body.page}, ${body.jobs.length} jobs`)
        }
      }
    }
    expect(problems).toEqual([])
  })
})

describe('any query string (fast-check)', () => {
  const name = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...V2_PARAMS) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'page[]',
        'level[]',
        'level[0]',
        'q[a]',
        'sort[]',
        'skills[][]',
        '__proto__',
        'constructor',
        'toString',
        'hasOwnProperty',
        'PAGE',
        'Limit',
        '',
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  )
  const value = fc.oneof(
    fc.constantFrom(...NUMERIC_LITERALS),
    fc.constantFrom(
      'date',
      'salary',
      'SALARY',
      ' salary ',
      'remote',
      'onsite,hybrid',
      'Remote ,  HYBRID',
      'moon',
      'engineering',
      'senior',
      '4_day_week',
      'python',
      'DE',
      'germany',
      'Worldwide',
      ',',
      ',,,',
      '',
    ),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ minLength: 150, maxLength: 260 }),
    fc.integer().map(String),
    fc.double().map(String),
    fc.bigInt().map(String),
    fc
      .array(fc.constantFrom('a', 'remote', 'de', 'python', 'senior', 'engineering', '4_day_week'), { maxLength: 60 })
      .map((values) => values.join(',')),
    fc.nat(3000).map((n) => 'x'.repeat(n)),
  )
  /** Broken percent-encoding and separators, sent as they are. */
  const junk = fc.constantFrom(
    '',
    '',
    '',
    '%',
    '%zz',
    '%f',
    '%ff',
    '%00',
    '%c0%ae',
    '%ed%a0%80',
    '+',
    '&',
    '&&',
    '=',
    '==',
    ';',
    '%26',
    '%3d',
    '#frag',
    '?',
    '[',
    ']',
  )
  const entry = fc.tuple(name, value, junk).map(([key, val, extra]) => `${pct(key)}=${pct(val)}${extra}`)

  it('v2 list: 200 with a well-formed page or 400 naming the parameter; never anything else', async () => {
    let runs = 0
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { maxLength: 12 }), async (entries) => {
        runs++
        const where = `/api/v2/jobs?${entries.join('&')}`
        expect(v2Problems(await rawGet(setup.target, where), where)).toEqual([])
      }),
      { numRuns: 400 },
    )
    expect(runs).toBeGreaterThanOrEqual(400)
  })

  it('v1 list and the single job ignore whatever query they are given', async () => {
    const slug = (JSON.parse((await rawGet(setup.target, '/api/v2/jobs?limit=1')).text) as { data: { slug: string }[] })
      .data[0]!.slug
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { maxLength: 10 }), fc.boolean(), async (entries, single) => {
        const where = single ? `/api/v2/jobs/${slug}?${entries.join('&')}` : `/api/v1?${entries.join('&')}`
        const res = await rawGet(setup.target, where)
        expect(record(res, where)).toEqual([])
        expect(res.status, where).toBe(200)
        if (single) expect((JSON.parse(res.text) as { slug: string }).slug).toBe(slug)
        else expect((JSON.parse(res.text) as { jobs: unknown[] }).jobs.length).toBeLessThanOrEqual(100)
      }),
      { numRuns: 150 },
    )
  })
})

describe('absurd sizes and shapes', () => {
  it('10,000 parameters (40 KB of URL) get 431 with the error body; 7,000 empty ones fit and are ignored', async () => {
    const tooMany = await rawGet(setup.target, `/api/v2/jobs?${'a=1&'.repeat(10_000)}`)
    expect(record(tooMany, '10,000 parameters')).toEqual([])
    expect(tooMany.status).toBe(431)
    const manyEmpty = await rawGet(setup.target, `/api/v2/jobs?${'a&'.repeat(7_000)}`)
    expect(v2Problems(manyEmpty, '7,000 empty parameters')).toEqual([])
    expect(manyEmpty.status).toBe(200)
    expect((JSON.parse(manyEmpty.text) as { total: number }).total).toBe(liveTotal)
  })

  it('100 KB values get 431, in the query and in a header; so do 3,000 headers', async () => {
    const cases: [string, Promise<RawResponse>][] = [
      ['100 KB q', rawGet(setup.target, `/api/v2/jobs?q=${'a'.repeat(100_000)}`)],
      ['100 KB category', rawGet(setup.target, `/api/v2/jobs?category=${'%41'.repeat(34_000)}`)],
      ['100 KB v1 page', rawGet(setup.target, `/api/v1?page=${'9'.repeat(100_000)}`)],
      ['100 KB slug', rawGet(setup.target, `/api/v2/jobs/${'a'.repeat(100_000)}`)],
      ['100 KB header', rawGet(setup.target, '/api/v2/jobs', { 'x-junk': 'a'.repeat(100_000) })],
      [
        '100 KB X-Forwarded-For',
        rawGet(setup.target, '/api/v2/jobs', { 'x-forwarded-for': '1.2.3.4, '.repeat(10_000) }),
      ],
      [
        '3,000 headers',
        rawGet(
          setup.target,
          '/api/v2/jobs',
          Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`x-h${i}`, 'v'])),
        ),
      ],
    ]
    for (const [where, pending] of cases) {
      const res = await pending
      expect(record(res, where), where).toEqual([])
      expect(res.status, where).toBe(431)
    }
  })

  it('just under the URL limit: a 15,000-character q is a 400 on q, a 15,000-character category matches nothing', async () => {
    const longQ = await rawGet(setup.target, `/api/v2/jobs?q=${'ab+'.repeat(5_000)}`)
    expect(v2Problems(longQ, 'q of 15,000')).toEqual([])
    expect(longQ.status).toBe(400)
    expect((JSON.parse(longQ.text) as { error: { field: string } }).error.field).toBe('q')
    const longCategory = await rawGet(setup.target, `/api/v2/jobs?category=${'x'.repeat(15_000)}`)
    expect(v2Problems(longCategory, 'category of 15,000')).toEqual([])
    expect((JSON.parse(longCategory.text) as { total: number }).total).toBe(0)
  })

  it('repeated keys mean the same as one (1,000 x level=senior), array notation and prototype names are unknown parameters', async () => {
    const once = JSON.parse((await rawGet(setup.target, '/api/v2/jobs?level=senior')).text) as { total: number }
    const repeated = await rawGet(setup.target, `/api/v2/jobs?${'level=senior&'.repeat(1_000)}`)
    expect(v2Problems(repeated, 'repeated level')).toEqual([])
    expect((JSON.parse(repeated.text) as { total: number }).total).toBe(once.total)
    expect(once.total).toBeGreaterThan(0)
    for (const where of [
      '/api/v2/jobs?level[]=senior&level[0]=lead&q[a]=b&page[]=2&sort[]=x',
      '/api/v2/jobs?__proto__=1&constructor=x&hasOwnProperty=1&toString=2&__proto__[page]=9',
      '/api/v2/jobs?page=2&page=2&limit=5&limit=5',
    ]) {
      const res = await rawGet(setup.target, where)
      expect(v2Problems(res, where)).toEqual([])
      expect(res.status, where).toBe(200)
    }
    // A single-valued parameter given twice with different values is ambiguous: 400 naming it.
    const twice = await rawGet(setup.target, '/api/v2/jobs?page=2&page=1&limit=500&limit=5')
    expect(v2Problems(twice, 'page twice')).toEqual([])
    expect(twice.status).toBe(400)
    expect((JSON.parse(twice.text) as { error: { field: string } }).error.field).toBe('page')
  })

  it('unicode and broken percent-encoding in q and the lists: 200, never a 5xx', async () => {
    const problems: string[] = []
    for (const raw of [
      'q=%F0%9F%9A%80%20ing%C3%A9nieur%20%E5%B7%A5%E7%A8%8B%E5%B8%88',
      'q=%E2%80%AE%00%01',
      'q=%',
      'q=%zz%',
      'q=%ff%fe',
      'q=%c0%ae%c0%ae',
      'q=%ed%a0%80',
      'country=%C3%96sterreich',
      'country=%',
      'skills=%ff',
      'category=%00',
      'level=%E2%80%8B',
      '%=%',
      '=&=&=',
      '&&&&',
    ]) {
      const res = await rawGet(setup.target, `/api/v2/jobs?${raw}`)
      problems.push(...v2Problems(res, raw))
      if (res.status !== 200) problems.push(`${raw}: ${res.status}`)
    }
    expect(problems).toEqual([])
  })
})

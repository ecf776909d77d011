/**
 * The find_jobs prompt: a ready-made request an agent's user can pick ("find
 * me jobs like this"), filled from a few arguments, each completable from the
 * snapshot's own vocabularies. It asks the model to use search_jobs with
 * exactly those filters and to keep compressed hours apart from the
 * four-day week.
 */
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js'
import { allCountryCodes, countryName, resolveCountry } from '../../core/geo.ts'
import { SCHEDULE_TYPE_VALUES } from '../../core/taxonomy.ts'
import type { LoadedSnapshot } from '../snapshot/load.ts'
import { type Completion, completeFrom } from './complete.ts'
import { InvalidParamsError, ToolError } from './errors.ts'
import { checkCategory, checkSkill, liveCategories } from './suggest.ts'

const ARGUMENTS = {
  skills: 'Skills, stack or tools, comma-separated (e.g. python, react).',
  country: 'Where the job is, or where remote work is allowed from: a country name or ISO code.',
  schedule: `A schedule type: ${SCHEDULE_TYPE_VALUES.join(', ')}.`,
  category: 'A job category, e.g. engineering or design.',
} as const
type ArgumentName = keyof typeof ARGUMENTS

export const PROMPTS: Prompt[] = [
  {
    name: 'find_jobs',
    title: 'Find jobs',
    description: 'Find live jobs by skills, country, schedule and category, and present the best matches.',
    arguments: Object.entries(ARGUMENTS).map(([name, description]) => ({ name, description, required: false })),
  },
]

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)

export function getPrompt(
  snapshot: LoadedSnapshot,
  name: string,
  given: Record<string, string> | undefined,
  now: number,
): GetPromptResult {
  const args = given ?? {}
  if (name !== 'find_jobs')
    throw new InvalidParamsError(`Unknown prompt "${name.slice(0, 100)}". This server's prompts: find_jobs.`)
  const unknown = Object.keys(args).filter((key) => !(key in ARGUMENTS))
  if (unknown.length)
    throw new InvalidParamsError(
      `find_jobs takes ${Object.keys(ARGUMENTS).join(', ')}; not ${unknown.map((k) => `"${k}"`).join(', ')}.`,
    )
  // In any letter case, as the tools and REST read a closed vocabulary.
  const schedule = args.schedule?.trim().toLowerCase()
  if (schedule && !(SCHEDULE_TYPE_VALUES as readonly string[]).includes(schedule))
    throw new InvalidParamsError(
      `schedule must be one of ${SCHEDULE_TYPE_VALUES.join(', ')}; got "${args.schedule!.slice(0, 100)}".`,
    )
  if (args.country && !resolveCountry(args.country))
    throw new InvalidParamsError(`country "${args.country.slice(0, 100)}" is not a country name or ISO code.`)
  // A skill or category no job has would make the prompt's search fail: refused now, naming the nearest.
  try {
    for (const skill of list(args.skills)) checkSkill(snapshot, skill.toLowerCase(), now)
    if (args.category?.trim()) checkCategory(snapshot, args.category.trim(), now)
  } catch (error) {
    if (error instanceof ToolError) throw new InvalidParamsError(error.message)
    throw error
  }
  const filters: Record<string, unknown> = {}
  if (list(args.skills).length) filters.skills = list(args.skills).map((skill) => skill.toLowerCase())
  if (args.country) filters.country = args.country
  if (schedule) filters.schedule = [schedule]
  if (args.category?.trim()) filters.category = [args.category.trim().toLowerCase()]
  const text = [
    `Find live jobs for me. Call search_jobs with ${JSON.stringify(filters)}${Object.keys(filters).length ? '' : ' (no filters: ask me what I am looking for first if that is too broad)'}.`,
    'Show the best matches with title, employer, schedule, work arrangement, location, salary when published, and the link.',
    'Only 4_day_week is a four-day week; never describe compressed_hours as one. Offer get_job for any job I want in full.',
  ].join(' ')
  return {
    description: 'Find live jobs matching the given filters.',
    messages: [{ role: 'user', content: { type: 'text', text } }],
  }
}

/** Completes one of find_jobs' arguments from the snapshot's vocabularies. */
export function completePromptArgument(
  snapshot: LoadedSnapshot,
  prompt: string,
  argument: string,
  typed: string,
  now: number,
): Completion {
  if (prompt !== 'find_jobs' || !(argument in ARGUMENTS))
    throw new InvalidParamsError(
      `Nothing to complete for ${argument} of prompt ${prompt.slice(0, 100)}: find_jobs takes ${Object.keys(ARGUMENTS).join(', ')}.`,
    )
  const vocabularies: Record<ArgumentName, () => Iterable<string>> = {
    skills: () => [...snapshot.jobs.valuesOf('tag')].sort(),
    country: () => allCountryCodes().map(countryName).sort(),
    schedule: () => SCHEDULE_TYPE_VALUES,
    category: () => liveCategories(snapshot, now),
  }
  if (argument !== 'skills') return completeFrom(vocabularies[argument as ArgumentName](), typed)
  // The last comma-separated skill is the one being typed; each value is the whole argument, the
  // skills before it included, since a client replaces what was typed with the value picked.
  const before = list(typed.slice(0, typed.lastIndexOf(',') + 1))
  const chosen = new Set(before.map((skill) => skill.toLowerCase()))
  const offered = [...vocabularies.skills()].filter((skill) => !chosen.has(skill))
  const completion = completeFrom(offered, typed.slice(typed.lastIndexOf(',') + 1))
  return { ...completion, values: completion.values.map((skill) => [...before, skill].join(', ')) }
}

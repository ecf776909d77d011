/**
 * Resource templates: a job and an employer addressable by URI, so a client
 * can attach one to a conversation without a tool call. Both read the same
 * data the tools do: a job is its v2 body as REST serves it, an employer is
 * get_company's profile.
 */
import type { ReadResourceResult, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js'
import { liveJobsByCompany } from '../query/live-jobs.ts'
import type { LoadedSnapshot } from '../snapshot/load.ts'
import { type Completion, completeFromSorted } from './complete.ts'
import { InvalidParamsError, ResourceNotFoundError } from './errors.ts'
import { ToolError } from './errors.ts'
import { getCompany } from './tools.ts'

const JOB_PREFIX = 'jobsnap://jobs/'
const COMPANY_PREFIX = 'jobsnap://companies/'

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: `${JOB_PREFIX}{slug}`,
    name: 'job',
    title: 'A live job',
    description: 'One live listing, exactly as GET /api/v2/jobs/{slug} returns it.',
    mimeType: 'application/json',
  },
  {
    uriTemplate: `${COMPANY_PREFIX}{slug}`,
    name: 'company',
    title: 'An employer',
    description: "An employer's profile and live job count, as get_company returns it.",
    mimeType: 'application/json',
  },
]

const json = (uri: string, text: string): ReadResourceResult => ({
  contents: [{ uri, mimeType: 'application/json', text }],
})

export function readResource(snapshot: LoadedSnapshot, uri: string, now: number): ReadResourceResult {
  if (uri.startsWith(JOB_PREFIX)) {
    const slug = decodeURIComponent(uri.slice(JOB_PREFIX.length))
    const position = snapshot.jobs.positionOf(slug)
    if (position === undefined || snapshot.jobs.isExpired(position, now))
      throw new ResourceNotFoundError(
        `No live job has the slug "${slug.slice(0, 100)}". search_jobs finds current ones.`,
      )
    return json(uri, snapshot.v2Bodies.body(position).toString('utf8'))
  }
  if (uri.startsWith(COMPANY_PREFIX)) {
    const slug = decodeURIComponent(uri.slice(COMPANY_PREFIX.length))
    try {
      return json(uri, JSON.stringify(getCompany(snapshot, slug, now)))
    } catch (error) {
      if (error instanceof ToolError) throw new ResourceNotFoundError(error.message)
      throw error
    }
  }
  throw new ResourceNotFoundError(
    `No resource at ${uri.slice(0, 200)}: this server's resources are ${RESOURCE_TEMPLATES.map((t) => t.uriTemplate).join(' and ')}.`,
  )
}

const companySlugs = new WeakMap<LoadedSnapshot, string[]>()

/** Completes a template's `slug` from the live jobs' or the employers' slugs. */
export function completeResourceArgument(
  snapshot: LoadedSnapshot,
  uriTemplate: string,
  argument: string,
  typed: string,
  now: number,
): Completion {
  if (argument !== 'slug' || !RESOURCE_TEMPLATES.some((t) => t.uriTemplate === uriTemplate))
    throw new InvalidParamsError(
      `Nothing to complete for ${argument} of ${uriTemplate.slice(0, 200)}: the templates take one argument, slug.`,
    )
  if (uriTemplate.startsWith(JOB_PREFIX)) {
    const isLive = (slug: string) => !snapshot.jobs.isExpired(snapshot.jobs.positionOf(slug)!, now)
    return completeFromSorted(snapshot.jobs.slugsInOrder(), typed, isLive)
  }
  let slugs = companySlugs.get(snapshot)
  if (!slugs) {
    const { companies } = snapshot
    slugs = Array.from({ length: companies.size }, (_, i) => companies.slug(i)).sort()
    companySlugs.set(snapshot, slugs)
  }
  // Only employers with a live job: the others read as not found.
  const liveJobs = liveJobsByCompany(snapshot, now)
  return completeFromSorted(slugs, typed, (slug) => {
    const id = snapshot.companies.id(snapshot.companies.indexOfSlug(slug)!)
    return (liveJobs.get(id) ?? 0) > 0
  })
}

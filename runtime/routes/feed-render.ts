/**
 * Job feeds: RSS 2.0, Atom 1.0 and JSON Feed 1.1 of a list of v2 jobs, made
 * with the `feed` library (which escapes and shapes all three). Pure: the
 * handler chooses the jobs and passes every date, so one snapshot always
 * renders the same bytes (and the same ETag).
 */
import { Feed, type Item } from 'feed'
import { formatSalary } from '../../core/salary.ts'
import type { V2Job } from '../../core/schema/api.ts'
import { categoryLabel, levelLabel, scheduleLabel } from '../../core/taxonomy.ts'

export const FEED_FORMATS = {
  rss: { contentType: 'application/rss+xml; charset=utf-8' },
  atom: { contentType: 'application/atom+xml; charset=utf-8' },
  json: { contentType: 'application/feed+json; charset=utf-8' },
} as const
export type FeedFormat = keyof typeof FEED_FORMATS

export interface FeedInput {
  /** The feed's own address in each format (the same filters), absolute. */
  links: Record<FeedFormat, string>
  /** The public website the jobs belong to. */
  siteUrl: string
  /** What the filters select, for the title ("engineering, remote"); empty for every job. */
  selection: string
  /** When the snapshot was built: the feed's updated date. */
  updated: Date
  jobs: V2Job[]
}

/** Characters kept of a job's description in an entry. */
const EXCERPT_CHARS = 600

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

function places(job: V2Job): string {
  const offices = (job.office_locations ?? []).map((l) => [l.city, l.country].filter(Boolean).join(', '))
  if (!job.is_remote) return offices.join('; ')
  const remote = (job.remote_allowed ?? []).map((l) => l.country ?? l.continent ?? l.region).filter(Boolean)
  return [...offices, `remote${remote.length ? ` (${remote.join(', ')})` : ''}`].join('; ')
}

/** One line of facts: employer, places, schedule, salary. */
function summary(job: V2Job): string {
  return [
    job.company?.name,
    places(job),
    job.schedule_type ? scheduleLabel(job.schedule_type) : undefined,
    formatSalary(job),
  ]
    .filter(Boolean)
    .join(' · ')
}

function entry(job: V2Job, format: FeedFormat): Item {
  const posted = new Date(job.posted_at)
  const excerpt =
    job.description && job.description.length > EXCERPT_CHARS
      ? `${job.description.slice(0, EXCERPT_CHARS).trimEnd()}…`
      : job.description
  return {
    title: job.company ? `${job.title} at ${job.company.name}` : job.title,
    id: job.url,
    guid: job.url,
    link: job.url,
    date: posted,
    published: posted,
    description: summary(job),
    content: [summary(job), excerpt]
      .filter(Boolean)
      .map((paragraph) => `<p>${escapeHtml(paragraph!).replace(/\n+/g, '<br>')}</p>`)
      .join(''),
    // RSS's <author> is an e-mail address, which no job has: there the employer is the item's dc:creator
    // (Dublin Core, as WordPress writes it; readers take it as the author).
    author:
      job.company && format !== 'rss'
        ? [{ name: job.company.name, link: job.company.website ?? job.company.url }]
        : undefined,
    extensions:
      job.company && format === 'rss' ? [{ name: 'dc:creator', objects: { _text: job.company.name } }] : undefined,
    // Atom requires a term (the value, as the filters take it); RSS and JSON Feed show the label.
    category: [
      job.category ? { term: `category:${job.category}`, name: categoryLabel(job.category) } : undefined,
      job.level ? { term: `level:${job.level}`, name: levelLabel(job.level) } : undefined,
      job.schedule_type ? { term: `schedule:${job.schedule_type}`, name: scheduleLabel(job.schedule_type) } : undefined,
    ].filter((category) => category !== undefined),
  }
}

/**
 * Characters XML 1.0 does not allow at all, escaped or not (C0 controls but
 * tab and newlines, lone surrogates, U+FFFE, U+FFFF). A filter value (`q`
 * goes into the title) or a job's text may hold one; the library copies them
 * as they are, which makes the whole document unreadable to any XML parser.
 */
const NOT_XML_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu

/** `xml` with every character XML cannot carry replaced by U+FFFD, the replacement character. */
function xmlCharactersOnly(xml: string): string {
  return xml.replace(NOT_XML_CHARACTER, '\uFFFD')
}

/** The feed in one format. */
export function renderFeed(format: FeedFormat, input: FeedInput): string {
  const feed = new Feed({
    title: input.selection ? `jobsnap: ${input.selection}` : 'jobsnap: every live job',
    description: 'The newest live job postings matching these filters, from the jobsnap API.',
    id: input.links[format],
    link: input.siteUrl,
    language: 'en',
    updated: input.updated,
    generator: 'jobsnap',
    feedLinks: input.links,
    copyright: 'Free to use; please link back to the public website.',
  })
  for (const job of input.jobs) feed.addItem(entry(job, format))
  if (format === 'rss') return xmlCharactersOnly(feed.rss2())
  if (format === 'atom') return xmlCharactersOnly(feed.atom1())
  return jsonFeed11(feed.json1())
}

/**
 * The library writes JSON Feed 1.0; 1.1 renames `author` to `authors` (a
 * list) and adds `language`. The rest is the same.
 */
function jsonFeed11(json10: string): string {
  const feed = JSON.parse(json10) as Record<string, unknown> & { items: Record<string, unknown>[] }
  const upgrade = (node: Record<string, unknown>) => {
    if (node.author) {
      node.authors = [node.author]
      delete node.author
    }
  }
  upgrade(feed)
  for (const item of feed.items) upgrade(item)
  // `version` keeps its place at the top, as the format asks.
  return JSON.stringify({ ...feed, version: 'https://jsonfeed.org/version/1.1', language: 'en' }, null, 2)
}

/**
 * The change feed's arithmetic: the jobs added, updated and removed between
 * two snapshots, composed from the links the build writes (each snapshot's
 * changes against the one it was built over). Pure: the caller reads the
 * links. Snapshots form a tree through their `previous` ids (republishing an
 * older snapshot starts a branch), so two of them are joined through their
 * nearest common ancestor: up from `since` (each link undone), then down to
 * `until`.
 */

export interface JobChangeSet {
  added: string[]
  updated: string[]
  removed: string[]
}

export interface ChangeLink extends JobChangeSet {
  previous: string | null
  /** Each listed slug's content hash before and after the link (null: no such job then). */
  hashes: Record<string, [string | null, string | null]>
}

/**
 * Walks the steps slug by slug: a slug's content at the start is what the
 * first step touching it found, at the end what the last one left. A job
 * edited and edited back, or added and removed between, is no change.
 */
function compose(steps: { link: ChangeLink; undo: boolean }[]): JobChangeSet {
  const traces = new Map<string, { start: string | null; end: string | null }>()
  for (const { link, undo } of steps) {
    for (const [slug, [before, after]] of Object.entries(link.hashes)) {
      const [from, to] = undo ? [after, before] : [before, after]
      const trace = traces.get(slug)
      if (trace) trace.end = to
      else traces.set(slug, { start: from, end: to })
    }
  }
  const out: JobChangeSet = { added: [], updated: [], removed: [] }
  for (const [slug, { start, end }] of traces) {
    if (start === null && end !== null) out.added.push(slug)
    else if (start !== null && end === null) out.removed.push(slug)
    else if (start !== null && end !== null && start !== end) out.updated.push(slug)
  }
  for (const list of [out.added, out.updated, out.removed]) list.sort()
  return out
}

/**
 * `id` and the snapshots before it, newest first, as far as links are known
 * (`linkOf` undefined: a pruned snapshot or one built before links existed).
 * The last one is the oldest a client can sync from.
 */
export function ancestry(id: string, linkOf: (id: string) => ChangeLink | undefined): string[] {
  const chain = [id]
  const seen = new Set(chain)
  for (let link = linkOf(id); link?.previous && !seen.has(link.previous); link = linkOf(link.previous)) {
    chain.push(link.previous)
    seen.add(link.previous)
  }
  return chain
}

/** The changes from `since` to `until`, or undefined when no chain of known links joins them. */
export function changesBetween(
  since: string,
  until: string,
  linkOf: (id: string) => ChangeLink | undefined,
): JobChangeSet | undefined {
  const down = ancestry(until, linkOf)
  const up = ancestry(since, linkOf)
  const common = up.find((id) => down.includes(id))
  if (common === undefined) return undefined
  const steps: { link: ChangeLink; undo: boolean }[] = []
  for (const id of up.slice(0, up.indexOf(common))) steps.push({ link: linkOf(id)!, undo: true })
  for (const id of down.slice(0, down.indexOf(common)).reverse()) steps.push({ link: linkOf(id)!, undo: false })
  return compose(steps)
}

/**
 * `changes` as of now, when some jobs of the live snapshot have expired since
 * it was built: an expired job is not live, so it is never added or updated
 * but removed (if `since` may have had it, that is, unless it is new since).
 */
export function withoutExpired(changes: JobChangeSet, expired: ReadonlySet<string>): JobChangeSet {
  if (expired.size === 0) return changes
  const added = new Set(changes.added)
  return {
    added: changes.added.filter((slug) => !expired.has(slug)),
    updated: changes.updated.filter((slug) => !expired.has(slug)),
    removed: [...changes.removed, ...[...expired].filter((slug) => !added.has(slug))].sort(),
  }
}

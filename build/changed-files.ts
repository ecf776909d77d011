/**
 * The names of the two lists each build leaves beside its snapshot for the
 * fronts: kept apart from build.ts so that `jobsnap purge`, which reads one,
 * starts without loading the whole build.
 */

/** The public paths the publish changed, one a line (for a front that purges by URL). */
export const CHANGED_PATHS_FILE = 'changed-paths.txt'
/** Beside it: the cache tags the publish made stale, one a line (what `jobsnap purge` sends). */
export const CHANGED_TAGS_FILE = 'changed-tags.txt'

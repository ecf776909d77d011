/**
 * Full-text search configuration shared by the build (which indexes) and the
 * runtime (which loads and queries): the same fields, tokenizer and options
 * on both sides, or a serialized index would not load.
 */
import type { Options, SearchOptions } from 'minisearch'

/** The text of one job as MiniSearch indexes it; `i` is its position in the date order. */
export interface SearchDocument {
  i: number
  title: string
  role: string
  company: string
  tags: string
  places: string
  description: string
}

export const SEARCH_FIELDS = ['title', 'role', 'company', 'tags', 'places', 'description'] as const

export const MINISEARCH_OPTIONS: Options<SearchDocument> = {
  idField: 'i',
  fields: [...SEARCH_FIELDS],
  storeFields: [],
}

/** Terms shorter than this match exactly: a prefix of one or two letters expands to most of the vocabulary. */
export const PREFIX_MIN_TERM_LENGTH = 3
/** Terms at least this long tolerate one typo. */
export const FUZZY_MIN_TERM_LENGTH = 5

/**
 * Search options that keep every query's cost bounded: AND of all terms,
 * prefix only on terms of 3+ characters, at most one edit on terms of 5+.
 */
export const BOUNDED_SEARCH_OPTIONS: SearchOptions = {
  combineWith: 'AND',
  prefix: (term) => term.length >= PREFIX_MIN_TERM_LENGTH,
  fuzzy: (term) => (term.length >= FUZZY_MIN_TERM_LENGTH ? 1 : false),
  maxFuzzy: 1,
  boost: { title: 3, role: 2, company: 2, tags: 2 },
}

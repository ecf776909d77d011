/**
 * Full-text search, shared by the build (which indexes) and the runtime
 * (which queries). `q` only filters (the order is still `sort`), so ranking
 * is wasted work: MiniSearch's BM25 scoring of every matching document cost
 * ~40 ms for a common word at 100k jobs. Instead the build writes plain
 * posting lists (term -> job positions) tokenized exactly as MiniSearch
 * tokenizes, and the runtime expands query terms (prefix, one typo) through
 * MiniSearch's radix tree, SearchableMap, then intersects typed arrays.
 */
import MiniSearch from 'minisearch'
import { z } from 'zod'
import { withoutAccents } from './fold.ts'

/** The text of one job that `q` searches. */
export interface SearchDocument {
  title: string
  role: string
  company: string
  tags: string
  places: string
  description: string
}

const tokenize = MiniSearch.getDefault('tokenize') as (text: string, fieldName?: string) => string[]
const processTerm = MiniSearch.getDefault('processTerm') as (
  term: string,
  fieldName?: string,
) => string | string[] | null | undefined | false

/**
 * Names whose symbols the tokenizer would drop, each made one word first: "C#"
 * would otherwise be the letter c, and find every "Washington D.C." job.
 * Index and queries both pass here, so `c#` finds C#, and only C#.
 */
const SYMBOL_WORDS: [RegExp, string][] = [
  // A version may follow (C#10, C++17, .NET8): it becomes a word of its own.
  [/(?<![\p{L}\p{N}])c#(?![\p{L}#])/giu, ' csharp '],
  [/(?<![\p{L}\p{N}])f#(?![\p{L}#])/giu, ' fsharp '],
  [/(?<![\p{L}\p{N}])c\+\+(?![\p{L}+])/giu, ' cplusplus '],
  // .NET alone or in ASP.NET; not the end of a domain or an address (example.net).
  [/(?<![\p{L}\p{N}])(asp)?\.net(?![\p{L}])/giu, ' $1 dotnet '],
]
/** Whether a text may hold one of SYMBOL_WORDS (most do not: the replacements are skipped). */
const SYMBOL_IN_NAME = /#|\+\+|\.net/i

function withSymbolWords(text: string): string {
  let out = text
  for (const [pattern, word] of SYMBOL_WORDS) out = out.replace(pattern, word)
  return out
}

/**
 * Normalised terms of a text: tokenized and lower-cased as MiniSearch does,
 * then without accents, so "brasilia" finds Brasília as a word, a prefix or
 * one typo away, and "zürich" finds Zurich. Index and queries both come here.
 */
export function textTerms(text: string): string[] {
  const out: string[] = []
  for (const token of tokenize(SYMBOL_IN_NAME.test(text) ? withSymbolWords(text) : text)) {
    const processed = processTerm(token)
    if (!processed) continue
    for (const term of Array.isArray(processed) ? processed : [processed]) {
      // A lone combining mark folds to nothing: no empty term.
      const folded = term && withoutAccents(term)
      if (folded) out.push(folded)
    }
  }
  return out
}

/** Distinct terms of every searchable field of a job. */
export function documentTerms(doc: SearchDocument): Set<string> {
  return new Set(textTerms(`${doc.title} ${doc.role} ${doc.company} ${doc.tags} ${doc.places} ${doc.description}`))
}

/** Terms shorter than this match exactly: a prefix of one or two letters expands to most of the vocabulary. */
export const PREFIX_MIN_TERM_LENGTH = 3
/** Terms at least this long that match no word exactly or as a prefix match words one typo away. */
export const FUZZY_MIN_TERM_LENGTH = 5
/** Query terms allowed (each adds a full pass over its postings); more is refused, never silently cut. */
export const MAX_QUERY_TERMS = 12
/** A query term expands to at most this many vocabulary terms (prefix and typo matches together). */
export const MAX_TERM_EXPANSIONS = 256

/** Distinct query terms in order, at most MAX_QUERY_TERMS of them (callers refuse more: queryTermsProblem). */
export function queryTerms(q: string): string[] {
  return [...new Set(textTerms(q))].slice(0, MAX_QUERY_TERMS)
}

/**
 * What is wrong with `q` as a search (more distinct words than MAX_QUERY_TERMS),
 * in words that follow the parameter's name; undefined when nothing is. Every
 * word must match, so dropping the extra ones would widen the result unsaid.
 */
export function queryTermsProblem(q: string): string | undefined {
  const count = new Set(textTerms(q)).size
  return count > MAX_QUERY_TERMS
    ? `must have at most ${MAX_QUERY_TERMS} different words (every one must match); got ${count}`
    : undefined
}

/**
 * On-disk form (index/terms.json + index/postings.bin): vocabulary sorted,
 * `counts[i]` positions for `terms[i]`, concatenated little-endian uint32 in
 * postings.bin in the same order.
 */
export const SerializedTerms = z
  .object({ terms: z.array(z.string()), counts: z.array(z.int().min(0)) })
  .refine((t) => t.terms.length === t.counts.length, 'terms and counts differ in length')
export type SerializedTerms = z.infer<typeof SerializedTerms>

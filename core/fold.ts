/**
 * Accent folding for matching: "Brasília", "Zürich" and "Côte d'Ivoire" are
 * found however they are typed. Canonical decomposition (NFD) splits a
 * letter from its marks, which are then dropped; letters that are not a base
 * letter plus marks (ø, ł, ß) stay as they are.
 */

/** Any character outside ASCII: text without one (most of it) is returned as it is, skipping ICU. */
const NON_ASCII = /[\u0080-\uffff]/

/** `text` without combining marks. */
export function withoutAccents(text: string): string {
  return NON_ASCII.test(text) ? text.normalize('NFD').replace(/\p{M}/gu, '') : text
}

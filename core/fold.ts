/**
 * Accent folding for matching: "Brasília", "Zürich" and "Côte d'Ivoire" are
 * found however they are typed. Canonical decomposition (NFD) splits a
 * letter from its accents, the combining diacritical marks (U+0300-U+036F),
 * which are then dropped. Only those: the vowel signs of Indic and other
 * scripts are marks too, and dropping them would make different words one.
 * Letters that are not a base letter plus an accent (ø, ł, ß) stay as they are.
 */

/** Any character outside ASCII: text without one (most of it) is returned as it is, skipping ICU. */
const NON_ASCII = /[\u0080-\uffff]/

/** `text` without combining marks. */
export function withoutAccents(text: string): string {
  return NON_ASCII.test(text)
    ? text
        .normalize('NFD')
        .replace(/[\u0300-\u036f]/g, '')
        .normalize('NFC')
    : text
}

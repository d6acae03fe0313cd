// Porter's 1980 suffix-stripping stemmer: "calculates", "calculation" and "calculator"
// meet at "calcul", so a paraphrased query still finds the tool's wording. Deliberately
// the original algorithm, not a tuned variant: its mistakes are well known and even.

const cache = new Map<string, string>()

/** The English stem of a lowercase ASCII word; other words are returned as they are. */
export function stem(word: string): string {
  if (word.length < 3 || !/^[a-z]+$/.test(word)) return word
  let result = cache.get(word)
  if (result === undefined) {
    result = porter(word)
    // Vocabularies are small; the bound only stops a flood of distinct query words.
    if (cache.size > 50_000) cache.clear()
    cache.set(word, result)
  }
  return result
}

function isConsonant(word: string, i: number): boolean {
  const c = word[i]
  if (c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u') return false
  if (c === 'y') return i === 0 || !isConsonant(word, i - 1)
  return true
}

/** Porter's m: the number of vowel-consonant sequences in `word[0, end)`. */
function measure(word: string, end: number): number {
  let m = 0
  let i = 0
  while (i < end && isConsonant(word, i)) i++
  while (i < end) {
    while (i < end && !isConsonant(word, i)) i++
    if (i >= end) break
    m++
    while (i < end && isConsonant(word, i)) i++
  }
  return m
}

function hasVowel(word: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isConsonant(word, i)) return true
  return false
}

function endsDoubleConsonant(word: string): boolean {
  const n = word.length
  return n >= 2 && word[n - 1] === word[n - 2] && isConsonant(word, n - 1)
}

/** Consonant-vowel-consonant at the end, the last not w, x or y ("hop", not "hoop"). */
function endsCvc(word: string, end = word.length): boolean {
  if (end < 3) return false
  const c = word[end - 1]
  return isConsonant(word, end - 3) && !isConsonant(word, end - 2) && isConsonant(word, end - 1)
    && c !== 'w' && c !== 'x' && c !== 'y'
}

/** Replaces the first matching suffix when the stem before it has m > `min`. */
function replaceSuffix(word: string, rules: readonly (readonly [string, string])[], min: number): string {
  for (const [suffix, replacement] of rules) {
    if (!word.endsWith(suffix)) continue
    const end = word.length - suffix.length
    return measure(word, end) > min ? word.slice(0, end) + replacement : word
  }
  return word
}

const STEP2 = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'],
  ['bli', 'ble'], ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'],
  ['ization', 'ize'], ['ation', 'ate'], ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'],
  ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'], ['iviti', 'ive'], ['biliti', 'ble'],
  ['logi', 'log'],
] as const

const STEP3 = [
  ['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', ''],
] as const

const STEP4 = [
  'al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou',
  'ism', 'ate', 'iti', 'ous', 've', 'ize',
] as const

function porter(input: string): string {
  let word = input
  // Step 1a: plurals.
  if (word.endsWith('sses')) word = word.slice(0, -2)
  else if (word.endsWith('ies')) word = word.slice(0, -2)
  else if (!word.endsWith('ss') && word.endsWith('s')) word = word.slice(0, -1)
  // Step 1b: -ed, -ing.
  if (word.endsWith('eed')) {
    if (measure(word, word.length - 3) > 0) word = word.slice(0, -1)
  } else {
    const suffix = word.endsWith('ed') ? 2 : word.endsWith('ing') ? 3 : 0
    if (suffix && hasVowel(word, word.length - suffix)) {
      word = word.slice(0, -suffix)
      if (word.endsWith('at') || word.endsWith('bl') || word.endsWith('iz')) word += 'e'
      else if (endsDoubleConsonant(word) && !/[lsz]$/.test(word)) word = word.slice(0, -1)
      else if (measure(word, word.length) === 1 && endsCvc(word)) word += 'e'
    }
  }
  // Step 1c: y → i after a vowel-bearing stem.
  if (word.endsWith('y') && hasVowel(word, word.length - 1)) word = word.slice(0, -1) + 'i'
  word = replaceSuffix(word, STEP2, 0)
  word = replaceSuffix(word, STEP3, 0)
  // Step 4: drop a suffix when m > 1 (-ion only after s or t).
  for (const suffix of STEP4) {
    if (!word.endsWith(suffix)) continue
    const end = word.length - suffix.length
    if (measure(word, end) > 1 && (suffix !== 'ion' || word[end - 1] === 's' || word[end - 1] === 't')) {
      word = word.slice(0, end)
    }
    break
  }
  // Step 5: a final e, a double l.
  if (word.endsWith('e')) {
    const m = measure(word, word.length - 1)
    if (m > 1 || (m === 1 && !endsCvc(word, word.length - 1))) word = word.slice(0, -1)
  }
  if (word.endsWith('ll') && measure(word, word.length) > 1) word = word.slice(0, -1)
  return word
}

import { stem } from './stem'

/**
 * Words too common to say anything about which tool is meant. English function words,
 * and the Chinese particles and pronouns that `Intl.Segmenter` returns as words.
 */
const STOP_WORDS = new Set([
  // `e.g.` and `i.e.` split into letters that carry nothing either.
  'e', 'g', 'eg', 'ie',
  'a', 'about', 'above', 'after', 'again', 'all', 'also', 'am', 'an', 'and', 'any', 'are', 'as', 'at',
  'be', 'been', 'before', 'being', 'between', 'both', 'but', 'by', 'can', 'could', 'did', 'do', 'does',
  'doing', 'each', 'either', 'etc', 'for', 'from', 'had', 'has', 'have', 'having', 'he', 'her', 'here',
  'him', 'his', 'how', 'i', 'if', 'in', 'into', 'is', 'it', 'its', 'just', 'may', 'me', 'might', 'more',
  'most', 'must', 'my', 'myself', 'no', 'nor', 'not', 'of', 'on', 'once', 'only', 'or', 'other', 'our',
  'ours', 'out', 'over', 'own', 'please', 'same', 'shall', 'she', 'should', 'so', 'some', 'such', 'than',
  'that', 'the', 'their', 'them', 'then', 'there', 'these', 'they', 'this', 'those', 'through', 'to',
  'too', 'under', 'until', 'up', 'us', 'very', 'was', 'we', 'were', 'what', 'when', 'where', 'which',
  'while', 'who', 'whom', 'why', 'will', 'with', 'would', 'you', 'your', 'yours',
  '的', '了', '和', '与', '及', '或', '是', '在', '把', '被', '对', '给', '吗', '呢', '吧', '啊', '请',
  '我', '你', '他', '她', '它', '我们', '你们', '他们', '这', '那', '这个', '那个', '一个', '帮', '帮我',
  '怎么', '怎么样', '什么', '一下', '哪些',
])

/** Han, kana and hangul: scripts written without spaces between words. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
const RUNS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[\p{L}\p{N}]+/gu

const ASCII = /^[\x00-\x7f]*$/

const segmenter = typeof Intl.Segmenter === 'function' ? new Intl.Segmenter('zh', { granularity: 'word' }) : undefined

/**
 * Splits text into index terms: identifiers on camelCase, snake_case, dots and dashes;
 * English words lowercased and stemmed (Porter) with stop words dropped; Chinese (and
 * other unspaced scripts) into `Intl.Segmenter` words plus the character bigrams of longer
 * words, so a query segmented differently from the description still meets it (only
 * bigrams where the runtime has no `Intl.Segmenter`).
 *
 * @example
 * tokenize('getWeatherForecast') // ['get', 'weather', 'forecast']
 * tokenize('math.factorial_of-numbers') // ['math', 'factori', 'number']
 */
export function tokenize(text: string): string[] {
  const terms: string[] = []
  // Most names and descriptions are ASCII: a cheaper path for them, same result.
  if (ASCII.test(text)) {
    const words = text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z])([A-Z][a-z])/g, '$1 $2').toLowerCase().match(/[a-z0-9]+/g)
    if (words) for (const word of words) if (!STOP_WORDS.has(word)) terms.push(stem(word))
    return terms
  }
  // `HTTPServer` → `HTTP Server`, `getPM2` → `get PM2`: identifier boundaries become spaces.
  const spaced = text.normalize('NFKC')
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .toLowerCase()
  for (const [run] of spaced.matchAll(RUNS)) {
    if (CJK.test(run[0])) addCjk(run, terms)
    else if (!STOP_WORDS.has(run)) terms.push(stem(run))
  }
  return terms
}

function addCjk(run: string, terms: string[]) {
  if (!segmenter) {
    if (run.length === 1) terms.push(run)
    addBigrams(run, terms)
    return
  }
  for (const { segment, isWordLike } of segmenter.segment(run)) {
    if (!isWordLike || STOP_WORDS.has(segment)) continue
    terms.push(segment)
    // `天气预报` also yields `天气`, `气预`, `预报`, so a query segmented into shorter
    // words still meets it. Bigrams across word boundaries would be mostly noise.
    if (segment.length > 2) addBigrams(segment, terms)
  }
}

function addBigrams(text: string, terms: string[]) {
  for (let i = 0; i + 1 < text.length; i++) terms.push(text.slice(i, i + 2))
}

import { foldTraditional } from './fold-traditional'
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
  // The Chinese counterparts of the English words above: pronouns and determiners,
  // numerals, modal verbs, prepositions and place words, conjunctions and adverbs.
  '我的', '你的', '他的', '她的', '它的', '我们的', '你们的', '他们的', '它们', '她们', '这些', '那些', '这里', '那里',
  '这样', '那样', '这种', '那种', '其中', '其他', '其它', '另外', '每', '每个', '各', '各个', '所有', '任何', '某', '某个', '某些',
  '一', '两', '二', '几', '几个', '第', '一次', '一份', '一种', '一段', '一位', '一条', '第一', '第二', '第三', '第一个', '第二个', '第三个',
  '能', '能够', '会', '可', '可能', '应该', '必须', '得', '着', '过', '的话',
  '关于', '对于', '到', '往', '由', '按', '按照', '除了', '为了', '跟', '同', '通过',
  '中', '上', '里', '内', '中的', '之间', '之中', '之后', '之前', '以后', '以前', '时候', '的时候',
  '以及', '并且', '而且', '或者', '还是', '但', '但是', '不过', '如果', '因为', '所以', '虽然', '然后',
  '不', '没', '正在', '一直', '非常', '特别', '更', '最', '较', '一起', '具体', '大概', '大约', '目前', '最近', '先', '顺便', '其实', '当然',
])

/**
 * Chinese question words, requests and filler: a natural sentence is full of them
 * (`帮我查一下明天杭州天气怎么样`), and they say nothing about which tool is meant.
 */
const FILLER = new Set([
  '样', '吧', '呀', '嘛', '哦', '呢', '么', '啦', '麻烦', '谢谢', '好的', '可以', '能否', '能不能', '可不可以', '是否', '有没有',
  '如何', '哪里', '哪个', '哪', '为什么', '多少', '告诉', '我想', '想', '想要', '要', '需要', '希望', '帮助', '帮忙', '一些', '一点',
  '我把', '用', '有', '没有', '就', '也', '都', '还', '再', '又', '很', '太', '吗', '下', '个', '让', '使', '用来', '现在', '已经',
  '了解', '知道', '看看', '觉得', '打算', '想知道', '还想', '我还', '我有', '进行', '做', '去', '来',
  '您', '咱们', '自己', '以下', '如下', '所', '将', '其', '该', '并', '而', '之', '从', '向', '于', '为', '以', '及其',
])

/** Han, kana and hangul: scripts written without spaces between words. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
// Letters of other scripts stop before a CJK character: `USA和China` is three runs.
const RUNS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|(?:(?![\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])[\p{L}\p{N}])+/gu

const ASCII = /^[\x00-\x7f]*$/

const segmenter = typeof Intl.Segmenter === 'function' ? new Intl.Segmenter('zh', { granularity: 'word' }) : undefined

/**
 * Splits text into index terms: identifiers on camelCase, snake_case, dots and dashes;
 * English words lowercased and stemmed (Porter) with stop words dropped; Chinese (and
 * other unspaced scripts) into `Intl.Segmenter` words without filler (`怎么样`, `帮我`),
 * longer words with their bigrams, so a query segmented differently from the description
 * still meets it (runs and their bigrams where the runtime has no `Intl.Segmenter`). Full-width
 * forms are folded to half-width (NFKC) and Traditional characters to Simplified.
 *
 * @example
 * tokenize('getWeatherForecast') // ['get', 'weather', 'forecast']
 * tokenize('math.factorial_of-numbers') // ['math', 'factori', 'number']
 */
export function tokenize(text: string): string[] {
  const terms: string[] = []
  words(text, (word) => {
    for (const term of word.terms) terms.push(term)
  })
  return terms
}

/**
 * What the index keeps of a text: `tokenize`'s terms, which make its length, and the
 * characters of its Chinese words, for query words that fall back on characters.
 */
export function documentTerms(text: string): { terms: string[]; chars: string[] } {
  const terms: string[] = []
  const chars: string[] = []
  words(text, (word) => {
    for (const term of word.terms) terms.push(term)
    for (const char of word.chars) chars.push(char)
  })
  return { terms, chars }
}

/** One word of a query: its terms, and the characters to fall back on when no tool has them. */
export interface QueryWord {
  /** The word and, for a Chinese word of three or more characters, its bigrams. */
  terms: string[]
  /** A Chinese word's characters (filler aside), for a word no tool has, such as `翻成`. */
  chars: string[]
}

/**
 * The query's words, each with the terms it gives: a Chinese word with its bigrams is one
 * word, so it weighs as one word, as an English word does. A word that repeats one already
 * seen is left out.
 *
 * @example
 * queryWords('巧克力 API') // [{ terms: ['巧克力', '巧克', '克力'], chars: ['巧', '克', '力'] }, { terms: ['api'], chars: [] }]
 */
export function queryWords(text: string): QueryWord[] {
  const found: QueryWord[] = []
  const seen = new Set<string>()
  words(text, (word) => {
    const terms = word.terms.filter((term) => !seen.has(term))
    for (const term of terms) seen.add(term)
    if (terms.length) found.push({ terms, chars: word.chars })
  })
  return found
}

function words(text: string, emit: (word: QueryWord) => void) {
  // Most names and descriptions are ASCII: a cheaper path for them, same result.
  if (ASCII.test(text)) {
    const found = text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z])([A-Z][a-z])/g, '$1 $2').toLowerCase().match(/[a-z0-9]+/g)
    if (found) for (const word of found) if (!STOP_WORDS.has(word)) emit({ terms: [stem(word)], chars: [] })
    return
  }
  // `HTTPServer` → `HTTP Server`, `getPM2` → `get PM2`: identifier boundaries become spaces.
  const spaced = foldTraditional(text.normalize('NFKC'))
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .toLowerCase()
  for (const [run] of spaced.matchAll(RUNS)) {
    if (CJK.test(run[0])) cjkWords(run, emit)
    else if (!STOP_WORDS.has(run)) emit({ terms: [stem(run)], chars: [] })
  }
}

function cjkWords(run: string, emit: (word: QueryWord) => void) {
  if (!segmenter) {
    const terms = [run]
    for (let i = 0; i + 1 < run.length; i++) terms.push(run.slice(i, i + 2))
    emit({ terms, chars: characters(run) })
    return
  }
  for (const { segment, isWordLike } of segmenter.segment(run)) {
    if (isWordLike && !STOP_WORDS.has(segment) && !FILLER.has(segment)) emit({ terms: cjkTerms(segment), chars: characters(segment) })
  }
}

function characters(word: string): string[] {
  return word.length < 2 ? [] : [...word].filter((char) => !STOP_WORDS.has(char) && !FILLER.has(char))
}

/**
 * A word and, when longer than two characters, its bigrams: `巧克力` also meets `克力`.
 * A query's characters count only for a word no tool has: always counted, they ranked
 * worse on the Chinese tuning queries (R@5 .904 against .921) and made queries slower.
 */
function cjkTerms(word: string): string[] {
  const terms = [word]
  if (word.length > 2) for (let i = 0; i + 1 < word.length; i++) terms.push(word.slice(i, i + 2))
  return terms
}

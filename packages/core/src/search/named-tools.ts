/**
 * Tool names by their squeezed form (lowercase letters and digits: `get_weather` and
 * `getWeather` are both `getweather`), to find the tools a query names.
 */
export class NamedTools {
  private readonly byKey = new Map<string, Set<string>>()

  add(name: string): void {
    const key = squeeze(name)
    let names = this.byKey.get(key)
    if (!names) this.byKey.set(key, names = new Set())
    names.add(name)
  }

  remove(name: string): void {
    const key = squeeze(name)
    const names = this.byKey.get(key)
    if (!names) return
    names.delete(name)
    if (!names.size) this.byKey.delete(key)
  }

  /**
   * Tools the query names: the whole query squeezed (`get weather` → `getweather`), or an
   * identifier-like word in it (`get_weather`, `math.factorial`, `getWeather`). A plain
   * word such as "find" does not count, or every sentence would name the `find` tool.
   */
  namedIn(query: string): Set<string> | undefined {
    let found: Set<string> | undefined
    const add = (key: string) => {
      const names = this.byKey.get(key)
      if (names) for (const name of names) (found ??= new Set()).add(name)
    }
    if (query.length <= 80) add(squeeze(query))
    for (const [word] of query.matchAll(IDENTIFIER)) {
      if (/[_.-]|\p{Ll}\p{Lu}/u.test(word)) add(squeeze(word))
    }
    return found
  }
}

const IDENTIFIER = /[\p{L}\p{N}][\p{L}\p{N}_.-]*[\p{L}\p{N}]/gu

function squeeze(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '')
}

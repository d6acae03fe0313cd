/** One row of the table: a country and its capital, in English and Chinese. */
export interface Capital {
  /** ISO 3166-1 alpha-2. */
  code: string
  country: { en: string; zh: string }
  capital: { en: string; zh: string }
  /** Other names people search for. */
  aliases?: string[]
}

/** A small embedded table; enough to show a read-only lookup tool, not an atlas. */
export const capitals: readonly Capital[] = [
  { code: 'CN', country: { en: 'China', zh: '中国' }, capital: { en: 'Beijing', zh: '北京' }, aliases: ['PRC', 'Peking'] },
  { code: 'JP', country: { en: 'Japan', zh: '日本' }, capital: { en: 'Tokyo', zh: '东京' } },
  { code: 'KR', country: { en: 'South Korea', zh: '韩国' }, capital: { en: 'Seoul', zh: '首尔' }, aliases: ['Korea'] },
  { code: 'IN', country: { en: 'India', zh: '印度' }, capital: { en: 'New Delhi', zh: '新德里' } },
  { code: 'TH', country: { en: 'Thailand', zh: '泰国' }, capital: { en: 'Bangkok', zh: '曼谷' } },
  { code: 'VN', country: { en: 'Vietnam', zh: '越南' }, capital: { en: 'Hanoi', zh: '河内' } },
  { code: 'SG', country: { en: 'Singapore', zh: '新加坡' }, capital: { en: 'Singapore', zh: '新加坡' } },
  { code: 'AU', country: { en: 'Australia', zh: '澳大利亚' }, capital: { en: 'Canberra', zh: '堪培拉' } },
  { code: 'NZ', country: { en: 'New Zealand', zh: '新西兰' }, capital: { en: 'Wellington', zh: '惠灵顿' } },
  { code: 'FR', country: { en: 'France', zh: '法国' }, capital: { en: 'Paris', zh: '巴黎' } },
  { code: 'DE', country: { en: 'Germany', zh: '德国' }, capital: { en: 'Berlin', zh: '柏林' } },
  { code: 'GB', country: { en: 'United Kingdom', zh: '英国' }, capital: { en: 'London', zh: '伦敦' }, aliases: ['UK', 'Britain'] },
  { code: 'IT', country: { en: 'Italy', zh: '意大利' }, capital: { en: 'Rome', zh: '罗马' } },
  { code: 'ES', country: { en: 'Spain', zh: '西班牙' }, capital: { en: 'Madrid', zh: '马德里' } },
  { code: 'RU', country: { en: 'Russia', zh: '俄罗斯' }, capital: { en: 'Moscow', zh: '莫斯科' } },
  { code: 'EG', country: { en: 'Egypt', zh: '埃及' }, capital: { en: 'Cairo', zh: '开罗' } },
  { code: 'KE', country: { en: 'Kenya', zh: '肯尼亚' }, capital: { en: 'Nairobi', zh: '内罗毕' } },
  { code: 'US', country: { en: 'United States', zh: '美国' }, capital: { en: 'Washington, D.C.', zh: '华盛顿' }, aliases: ['USA', 'America'] },
  { code: 'CA', country: { en: 'Canada', zh: '加拿大' }, capital: { en: 'Ottawa', zh: '渥太华' } },
  { code: 'MX', country: { en: 'Mexico', zh: '墨西哥' }, capital: { en: 'Mexico City', zh: '墨西哥城' } },
  { code: 'BR', country: { en: 'Brazil', zh: '巴西' }, capital: { en: 'Brasília', zh: '巴西利亚' }, aliases: ['Brasilia'] },
  { code: 'AR', country: { en: 'Argentina', zh: '阿根廷' }, capital: { en: 'Buenos Aires', zh: '布宜诺斯艾利斯' } },
]

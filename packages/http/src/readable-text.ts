import { convert } from 'html-to-text'

const OPTIONS = {
  wordwrap: false as const,
  selectors: [
    { selector: 'img', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'style', format: 'skip' },
    { selector: 'a', options: { ignoreHref: false, hideLinkHrefIfSameAsText: true, noAnchorUrl: true } },
  ],
}

/** HTML reduced to readable text: headings, paragraphs, lists and links, no markup. */
export function readableText(html: string): string {
  return convert(html, OPTIONS).replace(/\n{3,}/g, '\n\n').trim()
}

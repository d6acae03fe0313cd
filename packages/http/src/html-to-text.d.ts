// html-to-text 10 ships no type declarations; this covers the one function used here.
declare module 'html-to-text' {
  export function convert(html: string, options?: Record<string, unknown>): string
}

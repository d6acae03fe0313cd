export interface Corpora {
  /** The folder: DOGU_CORPORA, or `../shared/corpora` beside the repository. */
  path: string
  /** DOGU_REQUIRE_CORPORA=1: a missing folder is an error, not a notice. */
  required: boolean
  /** Why the corpus tier cannot run; undefined when the folder is there. */
  missing: string | undefined
}

export function corpora(env?: NodeJS.ProcessEnv): Corpora

/** A file or folder inside the corpora; throws, naming it, when it is not there. */
export function corpusPath(...segments: string[]): string

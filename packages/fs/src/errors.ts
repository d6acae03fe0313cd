// CodedErrorClass is named so that the emitted declarations reach it through @dogu/core, a
// dependency of this package, not through @dogu/schema, which is not one.
import { codedError, type CodedErrorClass } from '@dogu/core'

/**
 * A file tool's refusal or failure. The message is written for the model (what went wrong
 * and what to do instead); `code` is for hosts and tests.
 */
export class FsError extends codedError('FsError', {
  INVALID_PATH: 'the path is empty or holds a null byte',
  INVALID_ARGUMENT: 'an argument is out of range or malformed (a bad regex, a bad pattern)',
  INVALID_OPTIONS: 'createFsTools() options are invalid',
  OUTSIDE_ROOT: 'the path, or the real file a link points to, lies outside every allowed root',
  READ_ONLY: 'the path is in a read-only root or matches a protected pattern',
  NOT_FOUND: 'nothing exists at the path',
  DANGLING_LINK: 'the path is a symbolic link whose target does not exist',
  LINK_LOOP: 'resolving the path runs into a symbolic link cycle',
  NOT_A_FILE: 'the path exists but is not a regular file',
  NOT_A_DIRECTORY: 'the path, or one of its parents, is not a directory',
  TOO_LARGE: 'the file or content is over a size limit',
  BINARY: 'the file holds binary data',
  INVALID_UTF8: 'the file is not valid UTF-8',
  NO_MATCH: 'edit: the old text does not occur in the file',
  AMBIGUOUS: 'edit: the old text occurs more than once',
  NO_CHANGE: 'edit: the new text equals the old text',
  EXISTS: 'edit: creating a file that already exists',
  CHANGED: 'a directory or file on the path was replaced (e.g. by a symbolic link) between the check and its use; nothing was done',
  STALE: 'the file changed between reading and committing; nothing was written',
  CONFLICT: 'undo: the file no longer has the content the change produced',
  REPLACED: 'undo: the path no longer holds the very file the change wrote (a symbolic link, a hard link or another file is there, even with the same content)',
  UNKNOWN_CHANGE: 'undo: no change with this id is known',
  IO_ERROR: 'the operating system refused the operation',
}) {}

export namespace FsError {
  export type Code = keyof typeof FsError.Code
}

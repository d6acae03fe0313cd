/**
 * Our own traversal payloads: a few per category of the corpus tier's traversal list
 * (PayloadsAllTheThings, by category), written here so a plain clone tests each kind of
 * attack. Each row holds the code the `read` tool must give inside a workspace `root/` that
 * is empty, beside `etc/passwd` and `outside/` holding secrets. On POSIX only `/` separates;
 * percent-escapes, backslashes, `..;` and look-alike dots are literal name characters.
 */
export type TraversalCategory =
  | 'dotdot_plain' | 'filter_bypass_dots' | 'dotdot_semicolon' | 'backslash' | 'windows_drive'
  | 'absolute_posix' | 'url_encoded' | 'double_url_encoded' | 'overlong_utf8' | 'unicode'
  | 'nullbyte' | 'length_filler' | 'other'

export type TraversalCode = 'OUTSIDE_ROOT' | 'NOT_FOUND' | 'INVALID_PATH' | 'NOT_A_FILE'

const long = 'A'.repeat(256)

export const TRAVERSAL_CASES: readonly (readonly [TraversalCategory, string, TraversalCode])[] = [
  ['dotdot_plain', '..', 'OUTSIDE_ROOT'],
  ['dotdot_plain', '../etc/passwd', 'OUTSIDE_ROOT'],
  ['dotdot_plain', '../../../../../../../../etc/passwd', 'OUTSIDE_ROOT'],
  ['dotdot_plain', 'sub/../../outside/secret.txt', 'OUTSIDE_ROOT'],
  ['dotdot_plain', 'a/b/../../etc/passwd', 'NOT_FOUND'],
  // Leaves and comes back in by the root's own name.
  ['dotdot_plain', '../root/etc/passwd', 'NOT_FOUND'],
  // A sibling whose name starts with the root's is outside.
  ['dotdot_plain', '../root-evil/secret.txt', 'OUTSIDE_ROOT'],
  ['filter_bypass_dots', '..//etc/passwd', 'OUTSIDE_ROOT'],
  ['filter_bypass_dots', './.././../etc/passwd', 'OUTSIDE_ROOT'],
  ['filter_bypass_dots', '.../etc/passwd', 'NOT_FOUND'],
  ['filter_bypass_dots', '....//....//etc/passwd', 'NOT_FOUND'],
  ['filter_bypass_dots', '..../', 'NOT_FOUND'],
  ['dotdot_semicolon', '..;/etc/passwd', 'NOT_FOUND'],
  ['dotdot_semicolon', '..;/../etc/passwd', 'NOT_FOUND'],
  ['dotdot_semicolon', '../..;/etc/passwd', 'OUTSIDE_ROOT'],
  ['backslash', '..\\etc\\passwd', 'NOT_FOUND'],
  ['backslash', '..\\..\\..\\outside\\secret.txt', 'NOT_FOUND'],
  ['backslash', '\\etc\\passwd', 'NOT_FOUND'],
  ['backslash', '..\\/etc/passwd', 'NOT_FOUND'],
  ['backslash', '../..\\etc/passwd', 'OUTSIDE_ROOT'],
  ['windows_drive', 'C:\\Windows\\win.ini', 'NOT_FOUND'],
  ['windows_drive', 'C:/Windows/win.ini', 'NOT_FOUND'],
  ['windows_drive', 'c:..\\..\\etc\\passwd', 'NOT_FOUND'],
  ['absolute_posix', '/etc/passwd', 'OUTSIDE_ROOT'],
  ['absolute_posix', '//etc//passwd', 'OUTSIDE_ROOT'],
  ['absolute_posix', '/../../etc/passwd', 'OUTSIDE_ROOT'],
  ['absolute_posix', '/', 'OUTSIDE_ROOT'],
  ['url_encoded', '%2e%2e/etc/passwd', 'NOT_FOUND'],
  ['url_encoded', '..%2f..%2fetc%2fpasswd', 'NOT_FOUND'],
  ['url_encoded', '%2e%2e%2f%2e%2e%2foutside%2fsecret.txt', 'NOT_FOUND'],
  ['url_encoded', '..%5c..%5cetc%5cpasswd', 'NOT_FOUND'],
  ['url_encoded', '../%2e%2e/etc/passwd', 'OUTSIDE_ROOT'],
  ['double_url_encoded', '%252e%252e%252fetc/passwd', 'NOT_FOUND'],
  ['double_url_encoded', '..%252f..%252fetc/passwd', 'NOT_FOUND'],
  ['double_url_encoded', '%25%32%65%25%32%65/etc/passwd', 'NOT_FOUND'],
  ['overlong_utf8', '..%c0%af..%c0%afetc/passwd', 'NOT_FOUND'],
  ['overlong_utf8', '%c0%ae%c0%ae/etc/passwd', 'NOT_FOUND'],
  ['overlong_utf8', '%e0%80%ae%e0%80%ae/etc/passwd', 'NOT_FOUND'],
  ['unicode', '..%u2215etc%u2215passwd', 'NOT_FOUND'],
  // U+2215 DIVISION SLASH and U+2216 SET MINUS look like separators; they are name characters.
  ['unicode', '..\u2215..\u2215etc\u2215passwd', 'NOT_FOUND'],
  ['unicode', '..\u2216..\u2216etc/passwd', 'NOT_FOUND'],
  // FULLWIDTH FULL STOPs and the TWO DOT LEADER are not "..".
  ['unicode', '\uff0e\uff0e/etc/passwd', 'NOT_FOUND'],
  ['unicode', '\u2025/etc/passwd', 'NOT_FOUND'],
  ['nullbyte', 'etc/passwd\0.png', 'INVALID_PATH'],
  ['nullbyte', '../etc/passwd\0', 'INVALID_PATH'],
  ['nullbyte', '\0', 'INVALID_PATH'],
  ['nullbyte', 'etc/passwd%00', 'NOT_FOUND'],
  ['length_filler', `${long}/../etc/passwd`, 'NOT_FOUND'],
  ['length_filler', `${long}/../../etc/passwd`, 'OUTSIDE_ROOT'],
  ['length_filler', `${long}\\..\\etc/passwd`, 'INVALID_PATH'],
  ['length_filler', long, 'INVALID_PATH'],
  ['length_filler', `${'../'.repeat(64)}etc/passwd`, 'OUTSIDE_ROOT'],
  ['other', 'etc/passwd', 'NOT_FOUND'],
  ['other', '.htaccess', 'NOT_FOUND'],
  ['other', '', 'INVALID_PATH'],
  ['other', '.', 'NOT_A_FILE'],
  ['other', 'sub/..', 'NOT_A_FILE'],
]

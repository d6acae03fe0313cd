# The glob oracle (bash-glob.ts): prints, NUL-separated, what bash expands $PATTERN to in the
# working directory, directories marked with a trailing "/", "." and ".." left out.
# Needs 4.3: from then on globstar's ** no longer follows symbolic links to directories.
if (( BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 3) )); then
  echo "the glob oracle needs GNU bash >= 4.3 (globstar, extglob); this is bash $BASH_VERSION" >&2
  exit 3
fi
shopt -s globstar extglob nullglob
[[ $DOT == 1 ]] && shopt -s dotglob
IFS=
# An unquoted expansion is globbed but not brace-expanded; eval does brace expansion first,
# as minimatch does.
if [[ $BRACES == 1 ]]; then eval "matches=( $PATTERN )"; else matches=( $PATTERN ); fi
for match in "${matches[@]}"; do
  match=${match%/}
  [[ $match == ?(*/)@(.|..) ]] && continue
  [[ -d $match && ! -L $match ]] && match+=/
  printf '%s\0' "$match"
done

#!/bin/bash
# shell_cases.sh TEST_SHELL: the launch-script reader's cases (test_shell.c
# same[]) run by bash itself, with no arguments and an empty environment,
# the launchers replaced by functions that print the words from the *.py
# entry point on; each must print what the reader gives (ghosts left out:
# bash drops an unknown value).  Needs bash 4+.
set -u
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" --emit "$dir" || exit 1
stubs='
_show() { local on= w; for w in "$@"; do
  if [[ -z $on && $w == *.py && $w != -* ]]; then on=1; fi
  if [[ -n $on ]]; then printf "%s\n" "$w"; fi; done; }
torchrun() { _show "$@"; }
python() { _show "$@"; }
deepspeed() { _show "$@"; }
uv() { shift; "$@"; }
sh() { if [ "$1" = -c ]; then eval "$2"; fi; }
bash() { while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
  case $1 in -*c*) eval "$2"; return;; esac; shift; done; }
srun() { while [ $# -gt 0 ]; do case $1 in sh|bash|python|torchrun) "$@"; return;; esac;
  shift; done; }
sbatch() { eval "$(command cat)"; }
'
fail=0
for s in "$dir"/*.sh; do
  n=${s%.sh}
  (cd "$dir" && env -i PATH="$PATH" /bin/bash -c "$stubs"'f=$1; shift; . "$f"' _ "$s") > "$n.got" 2>/dev/null
  if ! cmp -s "$n.want" "$n.got"; then
    echo "case $(basename "$n"): bash printed something else"; diff "$n.want" "$n.got"; fail=1
  fi
done
exit $fail

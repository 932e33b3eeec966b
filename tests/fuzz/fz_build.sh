#!/bin/sh
# fz_build.sh CLANG OUT "FLAGS" "LIBS" MAIN.c SOURCE... - build a libFuzzer
# binary: every SOURCE is compiled with FLAGS into an archive and MAIN.c is
# linked against it, so that only the objects the target reaches are
# linked (the analyser also holds subcommands with other dependencies,
# e.g. generated assets, that the fuzz target never calls).  A SOURCE that
# does not compile on its own (it needs a generated header) is left out
# with a note; if the target needed it, the link fails and says so.
set -eu
cc=$1 out=$2 flags=$3 libs=$4 main=$5
shift 5
objs=$out.objs
rm -rf "$objs"
mkdir -p "$objs"
for src in "$@"; do
  o=$objs/$(basename "$src" .c).o
  # shellcheck disable=SC2086
  $cc $flags -c "$src" -o "$o" 2>"$o.log" || echo "fz_build: left out $src (does not compile alone: $(head -1 "$o.log"))"
done
rm -f "$objs/lib.a"
ar rcs "$objs/lib.a" "$objs"/*.o
# shellcheck disable=SC2086
$cc $flags "$main" "$objs/lib.a" $libs -o "$out"

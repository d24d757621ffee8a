#!/bin/sh
# Writes nccl-autotune's man page from its own --help: help2man for the page itself, one subsection per
# command with that command's --help, and the hand-written sections of nccl-autotune.h2m (environment, files,
# see also). Run by the build (target `man`).
# usage: make_man_page.sh NCCL_AUTOTUNE VERSION H2M_FILE OUTPUT.1.gz
set -eu
tool=$1
version=$2
sections=$3
out=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# help2man reads the program's --help and --version as a text stream; NCCL and CUDA need no GPU for that.
export LC_ALL=C
{
  cat "$sections"
  echo "[COMMANDS]"
  "$tool" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }' | while read -r cmd; do
    echo ".SS \"nccl-autotune $cmd\""
    echo ".nf"
    # roff reads a leading '.' or "'" as a request and a backslash as an escape: quote them.
    "$tool" "$cmd" --help | sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
    echo ".fi"
  done
} >"$work/sections.h2m"
help2man --no-info --no-discard-stderr --section=1 --version-string="$version" \
  --name="tune NVIDIA NCCL for one GPU cluster and run jobs with the result" \
  --include="$work/sections.h2m" --output="$work/nccl-autotune.1" "$tool"
gzip -9n -c "$work/nccl-autotune.1" >"$out"

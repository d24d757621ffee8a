#!/bin/sh
# The Debian package, end to end: `cpack -G DEB` from this build, its contents and Depends, `dpkg -i` into a
# temporary root, then the installed tool run from there: `run --profile P -- env` must export the path of the
# plugin the package installed (and that file must exist), the man page must hold every command, the bash
# completion must complete commands and options, the Lmod modulefile must put the installed tool first on PATH,
# and the Spack recipe must compile. Skips (77) without cpack or dpkg.
# usage: deb_package_check.sh BUILD_DIR WORK_DIR MAN_PAGE(ON|OFF)
set -eu
build=$1
work=$2
man_page=$3
for t in cpack dpkg dpkg-deb; do
  command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not found (Debian: cmake, dpkg)"; exit 77; }
done
rm -rf "$work"
mkdir -p "$work"
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/out" >"$work/cpack.log" 2>&1 || {
  cat "$work/cpack.log"; echo "FAIL: cpack -G DEB"; exit 1; }
deb=$(ls "$work"/out/nccl-autotune_*.deb)
echo "package: $deb"
dpkg-deb -c "$deb" >"$work/contents.txt"
has() { grep -q " \./usr/$1\$" "$work/contents.txt"; }
check "the binary" 'has bin/nccl-autotune'
check "the plugin" 'grep -q " \./usr/lib.*/libnccl-tuner-autotune\.so$" "$work/contents.txt"'
# The modules holding the MPI and NCCL code, beside the plugin where nccl-autotune looks for them.
check "the MPI module" 'grep -q " \./usr/lib.*/libnccl-autotune-mpi\.so$" "$work/contents.txt"'
check "the NCCL runner module" 'grep -q " \./usr/lib.*/libnccl-autotune-runner\.so$" "$work/contents.txt"'
check "the docs" 'has share/doc/nccl-autotune/README.md && has share/doc/nccl-autotune/docs/launcher.md'
check "the bash completion" 'has share/bash-completion/completions/nccl-autotune'
check "the modulefile" 'grep -q " \./usr/share/modulefiles/nccl-autotune/[0-9.]*\.lua$" "$work/contents.txt"'
check "the systemd units" 'has lib/systemd/system/nccl-autotune-metrics.timer && has lib/systemd/system/nccl-autotune-verify.service'
check "the Slurm health check" 'has libexec/nccl-autotune/nccl-autotune-healthcheck'
check "the alerts and dashboard" 'has share/nccl-autotune/prometheus/alerts.yml && has share/nccl-autotune/grafana/nccl-autotune.json'
if [ "$man_page" = ON ]; then check "the man page" 'has share/man/man1/nccl-autotune.1.gz'; fi
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
check "Depends from dpkg-shlibdeps (hwloc, Boost, libc)" \
  'echo "$depends" | grep -q libhwloc && echo "$depends" | grep -q libboost-program-options && echo "$depends" | grep -q libc6'

# dpkg -i into a root of its own (an empty package database; the Depends are this machine's, not the root's).
# The maintainer scripts run outside the root (it has no shell), with an ldconfig that only notes its call: the
# machine's own library cache is left alone.
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers" "$work/stub"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
printf '#!/bin/sh\necho "$@" >>"%s/ldconfig.calls"\n' "$work" >"$work/stub/ldconfig"
chmod +x "$work/stub/ldconfig"
if PATH="$work/stub:$PATH" dpkg --root="$root" --force-depends --force-not-root --force-script-chrootless \
  --log=/dev/null -i "$deb" >"$work/dpkg.log" 2>&1; then
  echo "ok: dpkg -i into $root"
  check "dpkg lists it installed" 'dpkg --root="$root" -s nccl-autotune | grep -q "Status: install ok installed"'
  check "its postinst ran ldconfig" '[ -f "$work/ldconfig.calls" ]'
else
  cat "$work/dpkg.log"
  echo "FAIL: dpkg -i into $root"
  fail=1
  dpkg -x "$deb" "$root"
fi

tool=$root/usr/bin/nccl-autotune
check "the installed tool runs" '"$tool" --version >"$work/version.txt" 2>&1'
# A profile of its own (a simulated calibration), then the job's environment as `run` gives it.
env -u NCCL_AUTOTUNE_PLUGIN_DIR -u NCCL_AUTOTUNE_STORE -u NCCL_AUTOTUNE_PROFILE \
  "$tool" tune --simulate --example h100-8x --store "$work/store" --name pkg >"$work/tune.txt" 2>&1
profile=$(ls "$work"/store/pkg-*.toml)
env -u NCCL_AUTOTUNE_PLUGIN_DIR -u NCCL_AUTOTUNE_STORE -u NCCL_AUTOTUNE_PROFILE -u NCCL_TUNER_PLUGIN \
  "$tool" run --profile "$profile" -- env >"$work/env.txt" 2>"$work/run.err" || { cat "$work/run.err"; fail=1; }
plugin=$(sed -n 's/^NCCL_TUNER_PLUGIN=//p' "$work/env.txt")
echo "NCCL_TUNER_PLUGIN=$plugin"
real_root=$(cd "$root" && pwd -P)
check "run exports the packaged plugin's path" 'case "$plugin" in "$real_root"/usr/lib*/libnccl-tuner-autotune.so) true ;; *) false ;; esac'
check "that plugin exists and is a shared object" '[ -f "$plugin" ] && head -c 4 "$plugin" | od -An -c | grep -q "E   L   F"'

if [ "$man_page" = ON ]; then
  gzip -dc "$root/usr/share/man/man1/nccl-autotune.1.gz" >"$work/man.1"
  commands=$("$tool" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
  missing=0
  for c in $commands; do grep -q "^\.SS \"nccl-autotune $c\"" "$work/man.1" || { echo "man page lacks $c"; missing=1; }; done
  check "the man page has a section per command and the environment" '[ "$missing" -eq 0 ] && grep -q "NCCL_AUTOTUNE_STORE" "$work/man.1"'
fi

completion=$root/usr/share/bash-completion/completions/nccl-autotune
if command -v bash >/dev/null 2>&1; then
  complete_words() {  # the line's words; prints COMPREPLY
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _nccl_autotune; printf "%s\n" "${COMPREPLY[@]}"' \
      _ "$completion" "$@"
  }
  check "completion: commands" 'complete_words "$tool" pr | grep -qx probe && complete_words "$tool" pr | grep -qx profile'
  check "completion: the options of run" 'complete_words "$tool" run --pro | grep -qx -- --profile'
  check "completion: after -- the job's command" 'complete_words "$tool" run -- ech | grep -qx echo'
fi

lmod=/usr/share/lmod/lmod/libexec/lmod
if [ -x "$lmod" ]; then
  loaded=$(env MODULEPATH="$root/usr/share/modulefiles" PATH=/usr/bin:/bin sh -c \
    'eval "$("$1" sh load nccl-autotune 2>/dev/null)"; command -v nccl-autotune; echo "$MANPATH"' _ "$lmod")
  echo "after module load: $loaded"
  check "the modulefile puts the installed tool first on PATH, its man pages on MANPATH" \
    'echo "$loaded" | head -1 | grep -qx "$root/usr/bin/nccl-autotune" && echo "$loaded" | grep -q "$root/usr/share/man"'
else
  echo "lmod not installed (Debian: lmod): the modulefile is not loaded"
fi

if command -v python3 >/dev/null 2>&1; then
  src=$(dirname "$0")/../..
  check "the Spack recipe compiles" \
    'python3 -c "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], \"exec\")" "$src/packaging/spack/spack_repo/nccl_autotune/packages/nccl_autotune/package.py"'
fi
[ "$fail" -eq 0 ] || { echo "package check failed; files in $work"; exit 1; }
echo "package $deb installs and runs"

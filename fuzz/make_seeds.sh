#!/usr/bin/env bash
# Generates the seed corpora of the fuzz targets from what the tests already use, so that nothing is copied
# into fuzz/: the tests' fixture files, the bundled examples, the ```toml / ```json blocks of docs/, the
# string literals of the parser tests, the bad-inputs table's inputs and, when present,
# ../shared/fixtures/topology. Usage: fuzz/make_seeds.sh OUT_DIR (creates OUT_DIR/<target>/).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: make_seeds.sh OUT_DIR}"
shared="$src/../shared/fixtures/topology"
rm -rf "$out"
for t in profile_toml env_values nccl_xml hwloc_xml probe_json journal telemetry nccl_csv nccl_tests_log plugin compiled_rules; do
  mkdir -p "$out/fuzz_$t"
done

# copy_files TARGET FILE...: each existing file becomes one seed, named after its path.
copy_files() {
  local target="$1"
  shift
  local f
  for f in "$@"; do
    [[ -f "$f" ]] || continue
    cp "$f" "$out/$target/$(echo "${f#"$src"/}" | tr '/' '_')"
  done
}

# raw_strings FILE: every C++ raw string literal R"(...)" in FILE, NUL-separated.
raw_strings() {
  awk 'BEGIN { inside = 0 }
       {
         line = $0
         while (length(line) > 0) {
           if (!inside) {
             i = index(line, "R\"(")
             if (i == 0) break
             line = substr(line, i + 3); inside = 1; buf = ""
           } else {
             j = index(line, ")\"")
             if (j == 0) { buf = buf line "\n"; break }
             buf = buf substr(line, 1, j - 1); printf "%s%c", buf, 0; inside = 0
             line = substr(line, j + 2)
           }
         }
       }' "$1"
}

# fenced_blocks REGEX FILE: the blocks of a Markdown file whose ```language matches REGEX, NUL-separated.
fenced_blocks() {
  awk -v lang="$1" 'BEGIN { inside = 0 }
       inside && /^```/ { printf "%s%c", buf, 0; inside = 0; next }
       inside { buf = buf $0 "\n"; next }
       $0 ~ ("^```(" lang ")$") { inside = 1; buf = "" }' "$2"
}

# with_strings FILE: the one-line string literals the profile tests append to their header (with("...")),
# unescaped, NUL-separated.
with_strings() {
  grep -o 'with("[^)]*")' "$1" | sed 's/^with("//; s/")$//; s/\\"/"/g' | while IFS= read -r line; do
    printf '%b\0' "$line"
  done
}

# save TARGET PREFIX [SELECTOR]: NUL-separated stdin records become seeds PREFIX-N (SELECTOR prepended).
save() {
  local target="$1" prefix="$2" selector="${3:-}" n=0 record
  while IFS= read -r -d '' record; do
    [[ -n "$record" ]] || continue
    printf '%s%s' "$selector" "$record" >"$out/$target/$prefix-$n"
    n=$((n + 1))
  done
}

shopt -s nullglob globstar

# Profiles: example files, fixtures, the documentation's examples and the reader tests' own texts.
copy_files fuzz_profile_toml "$src"/profiles/examples/*.toml "$src"/tests/**/*.toml
for f in "$src"/docs/*.md; do fenced_blocks toml "$f" | save fuzz_profile_toml "$(basename "$f" .md)"; done
for f in "$src"/tests/profiles/*.cpp "$src"/tests/plugins/*.cpp "$src"/tests/plugins/*.hpp; do
  raw_strings "$f" | save fuzz_profile_toml "$(basename "$f")"
done
# The reader tests append fragments to one header: seed those as whole profiles.
if [[ -f "$src/tests/profiles/test_profile_toml.cpp" ]]; then
  header=$(raw_strings "$src/tests/profiles/test_profile_toml.cpp" | tr '\0' '\n' | awk '/^schema/,/^command/')
  { raw_strings "$src/tests/profiles/test_profile_toml.cpp"; with_strings "$src/tests/profiles/test_profile_toml.cpp"; } |
    while IFS= read -r -d '' tail; do printf '%s\n%s\0' "$header" "$tail"; done | save fuzz_profile_toml with-header
fi

# Env values: the string literals of the spec tests, each tried as ALGO (0), PROTO (1), IB_HCA (2),
# SOCKET_IFNAME (3) and, for the policy (4), as the value of every allowlisted key the tests name.
if [[ -f "$src/tests/nccl/test_specs.cpp" ]]; then
  literals=$(grep -o '"[^"\\]*"' "$src/tests/nccl/test_specs.cpp" | sed 's/^"//; s/"$//' | sort -u)
  keys=$(grep -oh 'NCCL_[A-Z0-9_]*\|LD_[A-Z_]*' "$src"/nccl/env_policy.cpp "$src"/tests/profiles/*.cpp | sort -u)
  n=0
  while IFS= read -r value; do
    for selector in 0 1 2 3; do printf '%s%s' "$selector" "$value" >"$out/fuzz_env_values/spec-$selector-$n"; done
    n=$((n + 1))
  done <<<"$literals"
  n=0
  for key in $keys; do
    while IFS= read -r value; do
      printf '4%s=%s' "$key" "$value" >"$out/fuzz_env_values/env-$n"
      n=$((n + 1))
    done <<<"$(printf '%s\n' "$literals" | head -20; echo 1; echo 64; echo '=mlx5_0:1')"
  done
fi

# Topologies: the tests' fixtures, the bundled examples and the recorded machines.
for f in "$src"/tests/**/*.xml "$src"/topology/examples/*.xml "$shared"/nccl-xml/*.xml "$shared"/hwloc-xml/*.xml; do
  if grep -q '<system' "$f"; then copy_files fuzz_nccl_xml "$f"; fi
  if grep -q '<topology' "$f"; then copy_files fuzz_hwloc_xml "$f"; fi
done

# Probe records and dcgmi output: the health fixtures and the texts of the record and DCGM tests.
copy_files fuzz_probe_json "$src"/tests/topology/fixtures/health/*.json
for f in "$src"/tests/topology/test_dcgm.cpp "$src"/tests/topology/test_probe_json.cpp; do
  [[ -f "$f" ]] && raw_strings "$f" | save fuzz_probe_json "$(basename "$f")"
done

# Journal: the format document's examples and the journal tests' texts.
for f in "$src"/docs/*.md; do fenced_blocks '|json|jsonl' "$f" | grep -z '^{' | save fuzz_journal "$(basename "$f" .md)" || true; done
for f in "$src"/tests/search/*.cpp "$src"/tests/calibrate/*.cpp "$src"/tests/simulator/*.cpp "$src"/tests/runners/*.cpp; do raw_strings "$f" | save fuzz_journal "$(basename "$f")"; done

# Telemetry: the bad-inputs table's stores (a torn file, a foreign one) and the online tests' texts.
copy_files fuzz_telemetry "$src"/tests/bad_inputs/inputs/*-store/telemetry/*.telemetry
for f in "$src"/tests/tuner*/test_learn*.cpp "$src"/tests/profiles/test_online_profile.cpp; do
  [[ -f "$f" ]] && raw_strings "$f" | grep -z 'telemetry' | save fuzz_telemetry "$(basename "$f")" || true
done

# NCCL example-plugin CSV and nccl-tests logs: the fixtures of their tests.
copy_files fuzz_nccl_csv "$src"/tests/**/*.csv
for f in "$src"/tests/plugins/*.cpp "$src"/tests/profiles/*csv*.cpp; do
  raw_strings "$f" | grep -z ',' | save fuzz_nccl_csv "$(basename "$f")" || true
done
copy_files fuzz_nccl_tests_log "$src"/tests/**/*.log

# The plugin: profiles (as above) behind a 16-byte argument header; see fuzz_plugin.cpp.
for f in "$out"/fuzz_profile_toml/*; do
  # v6, AllReduce, 4096 bytes, 1 pipe op, no NULLs, a 7x3 table, 16 ranks on 2 nodes.
  printf '\x04\x04\x00\x10\x00\x00\x00\x00\x00\x00\x01\x00\x07\x03\x10\x02' >"$out/fuzz_plugin/$(basename "$f")"
  cat "$f" >>"$out/fuzz_plugin/$(basename "$f")"
done

# Compiled rules (see fuzz_compiled_rules.cpp): the fixed profile's own cache unmasked (1 + 224 zero bytes:
# header and three records), an empty cache (0), and every profile seed as a text to compile (2).
{ printf '\x01'; head -c 224 /dev/zero; } >"$out/fuzz_compiled_rules/fixed-cache"
printf '\x00' >"$out/fuzz_compiled_rules/empty-cache"
for f in "$out"/fuzz_profile_toml/*; do
  { printf '\x02'; cat "$f"; } >"$out/fuzz_compiled_rules/$(basename "$f")"
done

for d in "$out"/*/; do
  echo "make_seeds: $(basename "$d"): $(find "$d" -type f | wc -l) seeds"
done

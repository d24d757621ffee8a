#!/bin/sh
# Topology files both ways with real NCCL, for a bundled example:
#   - NCCL's own dump of the node (NCCL_TOPO_DUMP_FILE) reads back through `nccl-autotune probe`, with the
#     GPUs, their SM and their NVLink counts the original gives;
#   - our `probe --format nccl-xml` of the example, given to NCCL as NCCL_TOPO_FILE, makes NCCL build the
#     same rings, trees and channel counts as the original file (its INIT/GRAPH lines, compared as sets).
#   topology_check.sh BUILD_DIR JOB CLI VERSION EXAMPLE
. "$(dirname "$0")/lib.sh"
job=$2 cli=$3 version=$4 example=$5
realnccl_env "$1" "$example"
export NCCL_TUNER_PLUGIN=none NCCL_DEBUG_SUBSYS=INIT,GRAPH
# What NCCL built: its search results, channels, rings and trees (the log prefix "host:pid:tid [dev]" cut).
graph() {
  grep -E "Pattern [0-9]+, crossNic|coll channels|Channel [0-9]+/[0-9]+ : [0-9]|Trees \[" "$1" |
    sed 's/^[^ ]* \[[0-9]*\] NCCL INFO //' | sort -u
}
gpus() {
  "$cli" probe --input "$1" | sed -n 's/^ *\(GPU[0-9]*\) *\([0-9a-f:.]*\) .* sm \([0-9]*\) .*NVLinks \([0-9]*\).*/\1 \2 sm \3 nvlinks \4/p'
}
NCCL_TOPO_DUMP_FILE="$work/dump.xml" run_job "$work/original.log" allreduce:4096
graph "$work/original.log" >"$work/original"
[ -s "$work/original" ] || fail "NCCL logged no rings or trees"
[ -s "$work/dump.xml" ] || fail "NCCL wrote no topology dump"
gpus "$NCCL_TOPO_FILE" >"$work/gpus.original"
gpus "$work/dump.xml" >"$work/gpus.dump" || fail "probe refused NCCL's dump of $example"
[ -s "$work/gpus.original" ] || fail "probe listed no GPU in $example"
diff "$work/gpus.original" "$work/gpus.dump" || fail "NCCL's dump reads back differently"

"$cli" probe --input "$NCCL_TOPO_FILE" --format nccl-xml >"$work/ours.xml" || fail "probe --format nccl-xml failed"
NCCL_TOPO_FILE="$work/ours.xml" run_job "$work/ours.log" allreduce:4096
graph "$work/ours.log" >"$work/ours"
diff "$work/original" "$work/ours" || fail "NCCL built another graph from our nccl-xml output"
echo "NCCL $version, $example: its dump reads back ($(wc -l <"$work/gpus.dump") GPUs); our nccl-xml gives the same $(wc -l <"$work/ours") graph lines ($(grep -m1 'coll channels' "$work/ours"))"

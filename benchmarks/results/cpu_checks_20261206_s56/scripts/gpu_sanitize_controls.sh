#!/bin/bash
# Fifty-sixth session: positive controls for gpu_sanitize.sh. Each plants one bug in a copy of the Gluon
# linear's cluster hand-off and runs benchmarks/tools/linear_sanitize.py (cluster and global paths) under the
# sanitizer tool that should see it: racecheck without the barrier before the partial's store (ring reads
# against the store, one CTA) and without the first cluster sync (peers' partials read before written);
# memcheck with the peer rank 16 past the cluster. ~3 min.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
F=kimiops/gemm/skinny_gluon.py
plant() {  # name, tool, python expression that edits the source text s
  rm -rf /tmp/mut_$1 && mkdir -p /tmp/mut_$1 && cp -r kimiops benchmarks /tmp/mut_$1/
  python3 - /tmp/mut_$1/$F "$3" <<'PY'
import sys
path, edit = sys.argv[1], sys.argv[2]
s = open(path).read()
t = eval(edit)
assert t != s, "the mutation changed nothing"
open(path, "w").write(t)
PY
  extra=""; [ $2 = racecheck ] && extra="--racecheck-report all"
  (cd /tmp/mut_$1 && PYTHONPATH=/tmp/mut_$1 timeout 120 compute-sanitizer --tool $2 $extra --kernel-name kns=linear_kernel \
    --error-exitcode 3 python3 benchmarks/tools/linear_sanitize.py --paths cluster,global) > $OUT/control_$1.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/control_$1.log
}
plant no_thread_barrier racecheck 's.replace("            gl.thread_barrier()  # the ring reads", "            # removed: the ring reads", 1)'
plant no_first_cluster_sync racecheck 's.replace("            _cluster_sync(gl.arange(0, 128, layout=one_per_thread))\n            if pid_k == 0:", "            if pid_k == 0:", 1)'
plant rank_out_of_cluster memcheck 's.replace("[byte_off, byte_off * 0 + rank]", "[byte_off, byte_off * 0 + rank + 16]", 1)'
for f in $OUT/control_*.log; do echo "== $f"; grep -E "SUMMARY|rc |differ|rel err [0-9.e+-]+$" $f | grep -v "rel err [0-9.]*e-0[5-9]" | tail -n 4; done

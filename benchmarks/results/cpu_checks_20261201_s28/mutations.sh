# Mutations of pad_slot_id and of the vLLM decode adapters; each line: the mutation and what the
# listed tests then gave (run from the repository root on a clean tree: bash <this file>).
set -u
mut() { python3 - "$1" "$2" "$3" <<'PY'
import sys
p, old, new = sys.argv[1:]
s = open(p).read(); assert s.count(old) >= 1, old; open(p, "w").write(s.replace(old, new, 1))
PY
}
run() { r=$(timeout 600 python3 -m pytest -q -p no:cacheprovider $T 2>&1 | tail -1); echo "$1 => $r"; git checkout -q -- kimiops; }
R=kimiops/kda/kernels/recurrent.py
T="tests/kda/test_fla_keywords.py"
mut $R "read_ok = i0 > PAD_SLOT" "read_ok = i0 >= 0"; mut $R "write_ok = i1 > PAD_SLOT" "write_ok = i1 >= 0"; run "kernel: start slot 0 not padding"
mut $R "(slot > PAD_SLOT)" "(slot >= 0)"; run "kernel: token slot 0 written"
mut kimiops/kda/torch_path.py "valid = start > pad_slot_id" "valid = start >= 0"; run "torch path: start slot 0 not padding"
mut kimiops/kda/torch_path.py "(slot > pad_slot_id)" "(slot >= 0)"; run "torch path: token slot 0 written"
mut kimiops/kda/runner.py "parents=verify_parents, pad_slot_id=pad_slot_id)" "parents=verify_parents)"; run "runner: pad_slot_id not passed to the kernel"
mut kimiops/kda/args.py "real = indices[indices > pad_slot_id]" "real = indices[indices >= 0]"; run "checks: repeated 0 called duplicates"
mut kimiops/kda/args.py "if pad_slot_id not in PAD_SLOT_IDS:" "if False:"; run "checks: any pad_slot_id accepted"
F=kimiops/integrations/vllm.py
T=tests/integrations/test_vllm.py
mut $F "q = mixed_qkv.as_strided((B, 1, H, K), (row, row, K, 1), base)" "q = mixed_qkv.as_strided((B, 1, H, K), (row, row, K, 1), base + H * K)"; run "packed: q read where k is"
mut $F "base + 2 * H * K)" "base + H * K)"; run "packed: v read where k is"
mut $F "ssm_state_indices=state_indices, pad_slot_id=NULL_SLOT" "ssm_state_indices=state_indices"; run "packed: null block not padding"
mut $F "num_accepted_tokens=num_accepted_tokens, pad_slot_id=NULL_SLOT" "pad_slot_id=NULL_SLOT"; run "spec: num_accepted_tokens dropped"
mut $F "num_accepted_tokens=num_accepted_tokens, pad_slot_id=NULL_SLOT" "num_accepted_tokens=num_accepted_tokens"; run "spec: null block not padding"
mut $F "raw_beta.reshape(B, 1, H), scale, initial_state" "raw_beta.reshape(B, 1, H), None, initial_state"; run "packed: scale dropped"
mut $F '_SPEC_IGNORED = frozenset({"fuse_gate"})' '_SPEC_IGNORED = frozenset()'; run "spec: fuse_gate=True handed to vLLM"
mut $F "lower_bound=lower_bound, state_v_first=True,
        ssm_state_indices" "lower_bound=None, state_v_first=True,
        ssm_state_indices"; run "packed: lower_bound dropped"

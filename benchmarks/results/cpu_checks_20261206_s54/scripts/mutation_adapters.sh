#!/bin/bash
# Fifty-fourth session: mutations of the SGLang and vLLM adapter changes, each of which must make its tests
# fail. Usage: bash mutation_adapters.sh <repository root> (CPU; restores every file it changes).
cd "$1"
run() { CUDA_VISIBLE_DEVICES= timeout 300 python3 -m pytest -q -p no:cacheprovider -x $1 2>&1 | tail -n 1; }
mut() {  # file, old text (must occur once), new text, tests
  cp "$1" /tmp/mut_backup
  python3 -c "import sys; p=sys.argv[1]; s=open(p).read(); o=sys.argv[2]; assert s.count(o)==1, o; open(p,'w').write(s.replace(o, sys.argv[3]))" "$1" "$2" "$3" || { echo "not applied: $2"; return; }
  echo "== $1: $2 -> $3"; run "$4"
  cp /tmp/mut_backup "$1"
}
S=kimiops/integrations/sglang.py; V=kimiops/integrations/vllm.py; TS=tests/integrations/test_sglang.py
mut $V 'unserved_reason(q.device, kwargs, FLA_CHUNK_TABLES)' 'unserved_reason(q.device, kwargs)' tests/integrations/test_vllm.py
mut $S 'setattr(self, flag, served or declared)' 'setattr(self, flag, declared)' $TS
mut $S 'bool(getattr(self, flag, default))' 'bool(default)' $TS
mut $S 'if asked and getattr(self, flag) and not' 'if False and getattr(self, flag) and not' $TS
mut $S 'track_state is not None or track_chunk_idx is not None)' 'False)' $TS
mut $S '"decode", reason, "supports_bounded_gate_decode", lower_bound is not None)' \
  '"decode", reason, "supports_bounded_gate_decode", False)' $TS
mut $S '"packed_decode", reason, "supports_bounded_gate_decode", lower_bound is not None)' \
  '"packed_decode", reason, "supports_bounded_gate_decode", False)' $TS
mut $S '"supports_packed_decode", True)' '"supports_packed_decode", False)' $TS
mut $S 'if reason is None and intermediate_states_buffer is None:' 'if False:' $TS
mut $V '    if _kda_module_source() is None:' '    if False:' tests/integrations/test_vllm.py
mut $V 'base + ".py"):' 'base + ".pyc"):' tests/integrations/test_vllm.py
mut $V '    except ValueError:  # a' '    except KeyError:  # a' tests/integrations/test_vllm.py

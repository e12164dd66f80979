import json, glob, collections
for op in ("prefill", "decode"):
    rows = [json.loads(l) for f in glob.glob(f"/tmp/fuzz_kda/log*_{op}_*.jsonl") for l in open(f)]
    rows = [r for r in rows if "triton" in r or "triton_exc" in r]
    print(f"== {op}: {len(rows)} configs run, flagged {sum(1 for r in rows if r['flags'])}")
    C = collections.Counter
    def cnt(f): return dict(C(f(r) for r in rows))
    print(" mode", cnt(lambda r: "varlen" if "lens" in r["cfg"] else f"B{r['cfg']['B']}"))
    print(" dtype", cnt(lambda r: r["cfg"]["dtype"] + ("+gb32" if r["cfg"]["gb_fp32"] else "")))
    print(" H/HV", cnt(lambda r: f"{r['cfg']['H']}/{r['cfg']['H']*r['cfg']['G']}"))
    print(" KxV", len(cnt(lambda r: (r['cfg']['K'], r['cfg']['V']))), "combos", "K!=V", sum(r['cfg']['K']!=r['cfg']['V'] for r in rows))
    print(" state", cnt(lambda r: r["cfg"]["state"]), "v_first", sum(r["cfg"]["state_v_first"] for r in rows))
    print(" gate", cnt(lambda r: r["cfg"]["gate"] + ":" + r["cfg"].get("gmag", "") + (":noA" if r["cfg"]["gate"]=="lower_bound" and not r["cfg"]["has_A"] else "")))
    print(" l2", sum(r["cfg"]["l2"] for r in rows), "sig", sum(r["cfg"]["sig"] for r in rows), "neg_eig", sum(r["cfg"]["neg_eig"] for r in rows), "ofs", sum(r["cfg"]["ofs"] for r in rows))
    print(" v2 extras", {k: sum(bool(r["cfg"].get(k)) for r in rows) for k in ("strided", "repeat", "track", "krep", "spec", "num_acc", "pad0")})
    if op == "prefill":
        print(" plan", cnt(lambda r: "n/a" if not r.get("plan") else ("seg%d" % r["plan"]["seg_max"] if r["plan"]["seg_max"] > 1 else "parts%d" % r["plan"]["parts"])))
        print(" state_cfg", cnt(lambda r: r["cfg"]["state_cfg"]), "intra_cfg", cnt(lambda r: r["cfg"]["intra_cfg"]))
        lens = C(L for r in rows if "lens" in r["cfg"] for L in r["cfg"]["lens"])
        print(" edge lens", {L: lens[L] for L in (0, 1, 31, 32, 33, 63, 64, 65)})
    else:
        print(" tile", cnt(lambda r: str(r["cfg"]["tile"][:2]) if r["cfg"]["tile"] else "table"))

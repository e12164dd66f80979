"""Offline compile of a Triton kernel for sm_90 (no GPU needed): ``triton.compile`` for an H100/H200
target plus the ptxas that ships with Triton, for the compile-stats scripts next to this file."""
import hashlib
import inspect
import os
import re
import subprocess
import tempfile

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

FLOAT_SCALARS = ("scale", "lower_bound")
# Pointer types of the prefill kernels' parameters at bf16 inputs, of every revision (stage 1's v and
# u_out until the ninth session, the state stage's u; ``compile_sm90`` ignores names a kernel lacks):
# ``chunk_intra_kernel``, and ``chunk_state_kernel`` / ``segment_starts_kernel``.
INTRA_POINTERS = {"q": "*bf16", "k": "*bf16", "v": "*bf16", "g": "*bf16", "beta": "*bf16", "A_log": "*fp32",
                  "dt_bias": "*fp32", "cu_seqlens": "*i32", "w_out": "*fp16", "u_out": "*fp32", "tb_out": "*fp32",
                  "qg_out": "*fp16", "kg_out": "*fp16", "aqk_out": "*fp16", "gc_out": "*fp32", "chain_done": "*i32"}
STATE_POINTERS = {"w": "*fp16", "u": "*fp32", "tb": "*fp32", "qg": "*fp16", "kg": "*fp16", "aqk": "*fp16",
                  "gc": "*fp32", "v": "*bf16", "o": "*bf16", "h0": "*fp32", "h0_indices": "*i32", "ht": "*fp32",
                  "ht_indices": "*i32", "cu_seqlens": "*i32", "order": "*i32", "carry": "*fp32", "track": "*fp32",
                  "track_idx": "*i32", "maps": "*fp32", "starts": "*fp32"}
DEBUG_PREFIXES = (".loc", ".file", "//", ".b8", ".b32", ".b64", ".section", "$L__", ".debug")  # DWARF data too


def ptx_digest(ptx: str) -> str:
    """Hash of the PTX without debug lines (source line numbers): equal digests, the same machine
    code before ptxas."""
    code = "\n".join(line for line in ptx.split("\n")
                     if not line.strip().startswith(DEBUG_PREFIXES) and "debug" not in line)
    return hashlib.sha1(code.encode()).hexdigest()[:12]


def compile_sm90(jit_fn, pointers: dict, const: dict, options: dict, divisible=()):
    """Compile ``jit_fn`` (a ``@triton.jit`` function) for sm_90.

    Args:
        pointers: parameter name -> pointer type (``"*bf16"``...); names the function lacks are
            ignored, so one map serves several revisions of a kernel.
        const: constexpr values, likewise filtered by the function's parameters; every constexpr
            parameter of the function without a default needs one (ValueError otherwise).
        options: ``triton.compile`` options (``num_warps``, ``num_stages``, ``maxnreg``).
        divisible: names of further integer parameters declared divisible by 16, as Triton
            specializes an int argument that is (an int of value 1 is a ``const`` entry instead).
    Other parameters are typed ``i64`` (``s_*`` strides), ``fp32`` (``scale``, ``lower_bound``) or
    ``i32``; pointers and strides are declared 16-divisible, as the launcher's tensors are.
    Returns:
        ``(compiled kernel, ptxas summary)``: the summary names registers and spill stores.
    """
    signature = inspect.signature(jit_fn.fn).parameters
    params = list(signature)
    const = {n: x for n, x in const.items() if n in params}
    empty = inspect.Parameter.empty
    const.update({p.name: signature[p.name].default for p in jit_fn.params  # constexprs with a default
                  if p.is_constexpr and p.name not in const and signature[p.name].default is not empty})
    missing = [p.name for p in jit_fn.params if p.is_constexpr and p.name not in const]
    if missing:  # typed as a runtime int below, it would compile a variant the launcher never runs
        raise ValueError(f"const: no value for the constexpr parameters {missing} of {jit_fn.fn.__name__}")
    sig = {p: pointers[p] if p in pointers else "constexpr" if p in const else "i64" if p.startswith("s_")
           else "fp32" if p in FLOAT_SCALARS else "i32" for p in params}
    attrs = {(params.index(n),): [["tt.divisibility", 16]] for n in params
             if n in pointers or n.startswith("s_") or n in divisible}
    kernel = triton.compile(ASTSource(jit_fn, sig, const, attrs), target=GPUTarget("cuda", 90, 32), options=options)
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas")
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(kernel.asm["ptx"])
    cap = [f"--maxrregcount={options['maxnreg']}"] if options.get("maxnreg") else []
    r = subprocess.run([ptxas, "-arch=sm_90a", "-v", *cap, f.name, "-o", "/dev/null"], capture_output=True, text=True)
    os.unlink(f.name)
    return kernel, " ".join(re.findall(r"Used \d+ registers|\d+ bytes spill stores", r.stderr))


def sass_text(cubin: bytes) -> list[str]:
    """Every line of a cubin's SASS, labels included (``nvdisasm`` shipped with Triton)."""
    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    sass = subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True).stdout
    os.unlink(f.name)
    return sass.splitlines()


def _sass_lines(cubin: bytes) -> list[str]:
    """Instruction lines of a cubin's SASS."""
    # an instruction line starts with its byte offset, /*0000*/ to /*fff0*/ and then five digits and
    # more (16 bytes per instruction: four digits alone stop counting at 4096 instructions)
    return [line for line in sass_text(cubin) if re.search(r"/\*[0-9a-f]{4,}\*/", line)]


def _instruction_texts(cubin: bytes) -> list[str]:
    """Each instruction of a cubin's SASS without its byte offset and trailing comment."""
    return [line.split("*/", 1)[1].strip().rstrip(";").split("/*")[0].strip() for line in _sass_lines(cubin)]


def sass_instruction_count(cubin: bytes) -> int:
    """Instructions in a cubin's SASS."""
    return len(_sass_lines(cubin))


def sass_opcode_digest(cubin: bytes) -> str:
    """Hash of the SASS opcode sequence (mnemonics with their modifiers and predicates, no
    operands): equal for two builds whose machine code differs only in operands, e.g. kernel
    parameters moved to other constant-bank offsets by a parameter added to the signature."""
    ops = []
    for body in _instruction_texts(cubin):
        pred, rest = (body.split(" ", 1) if body.startswith("@") else ("", body))
        ops.append(f"{pred} {rest.split(' ', 1)[0]}")
    return hashlib.sha1("\n".join(ops).encode()).hexdigest()[:12]


def sass_digest(cubin: bytes) -> str:
    """Hash of the SASS instructions with their operands (no byte offsets): equal digests, the same
    machine code."""
    return hashlib.sha1("\n".join(_instruction_texts(cubin)).encode()).hexdigest()[:12]


def longest_loop_opcodes(lines: list[str]) -> list[str]:
    """Opcodes of the longest loop of ``sass_text``'s lines: from a label to the last branch back to
    it (the prefill state stage's chunk loop)."""
    labels = {m.group(1): i for i, x in enumerate(lines) if (m := re.match(r"^(\.L_x_\d+):", x.strip()))}
    best = []
    for i, line in enumerate(lines):
        m = re.search(r"BRA\s+`\((\.L_x_\d+)\)", line)
        if m and labels.get(m.group(1), i) < i:
            body = [op.group(1) for x in lines[labels[m.group(1)]:i + 1]
                    if (op := re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", x))]
            best = max(best, body, key=len)
    return best

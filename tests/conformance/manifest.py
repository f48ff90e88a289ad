"""The conformance set (issue 15, item 6): kernels written the way the field publishes them,
each with the verdict it must get under each rule set. One table, read by
tests/conformance/test_conformance_cpu.py (device cpu rows), harness/bench/tools/gpu_conformance.py and
tests/conformance/test_conformance_gpu.py (device cuda rows); docs/conformance.md explains it.

An expectation is ``"status"`` or ``"status rule"``. ``passes_1e2`` (when not None) is what the
verdict's tolerance evidence must say about KernelBench v0.1's 1e-2; ``needs`` names a module
without which the row is skipped (cupy).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
TASK_DIRS = (HERE / "tasks", HERE.parent / "adversarial" / "tasks")
RULE_SETS = ("strict", "partial")


@dataclass(frozen=True)
class Row:
    kernel: str  # file stem under kernels/
    task: str  # file stem under tasks/ or tests/adversarial/tasks/
    device: str  # "cpu" | "cuda"
    strict: str
    partial: str
    note: str = ""
    passes_1e2: bool | None = None
    needs: str = ""

    def expected(self, rules: str) -> tuple[str, str | None]:
        status, _, rule = getattr(self, rules).partition(" ")
        return status, rule or None

    def path(self) -> Path:
        return KERNELS / f"{self.kernel}.py"

    def task_path(self) -> Path:
        return next(p for d in TASK_DIRS if (p := d / f"{self.task}.py").exists())

    def rule_sets(self) -> tuple[str, ...]:
        """Both rule sets where they expect different verdicts, else strict alone (same code path)."""
        return RULE_SETS if self.strict != self.partial else ("strict",)


V = "valid"
TORCH = "rejected custom_code.torch_compute"
NOREP = "rejected custom_code.no_replacement"
TOL = "incorrect correctness.tolerance"

ROWS: list[Row] = [
    # -- CPU (CI): C++ load_inline; most share one extension source and flags (one cached build) --
    Row("cpu_cpp_relu_extra_cflags", "relu", "cpu", V, V, "extra_cflags=['-O3']"),
    Row("cpu_cpp_relu_include_paths", "relu", "cpu", V, V, "extra_include_paths"),
    Row("cpu_cpp_relu_use_pch", "relu", "cpu", V, V, "use_pch=True + extra_cflags: issue 15's extension.h.sign"),
    Row("cpu_cpp_sum_pch_noflags", "sum_dim", "cpu", V, V, "use_pch=True, no flags"),
    Row("cpu_variant_model_class", "relu", "cpu", V, V, "class Model, no ModelNew"),
    Row("cpu_variant_alias", "relu", "cpu", V, V, "ModelNew = OptimizedRelu"),
    Row("cpu_variant_varargs", "relu", "cpu", V, V, "forward(self, *args), __init__(*args, **kwargs)"),
    Row("cpu_variant_alpha_default", "matmul", "cpu", V, V, "forward(self, A, B, alpha=1.0)"),
    Row("cpu_inplace_own_buffer", "relu", "cpu", V, V, "clone, then in place on its own buffer"),
    Row("cpu_inplace_on_input", "relu", "cpu", "incorrect correctness.inputs_modified",
        "incorrect correctness.inputs_modified", "in place on the caller's input"),
    Row("cpu_partial_gemm_in_torch", "gemm_bias_relu", "cpu", TORCH, V, "level-2: GEMM in torch, own epilogue"),
    Row("cpu_full_gemm_bias_relu", "gemm_bias_relu", "cpu", V, V, "level-2 fully custom"),
    Row("cpu_partial_noop_kernel", "gemm_bias_relu", "cpu", TORCH, NOREP, "every reference op in torch + own no-op"),
    Row("cpu_torch_only_relu", "relu", "cpu", TORCH, NOREP, "no kernel of its own"),
    # -- CUDA (harness/bench/tools/gpu_conformance.py) ---------------------------------------------------------
    Row("cuda_inline_relu_fast_math", "relu", "cuda", V, V, "with_cuda + extra_cuda_cflags -O3 --use_fast_math"),
    Row("cuda_inline_relu_cuda_only_flags", "relu", "cuda", V, V, "nvcc-only flags"),
    Row("cuda_inline_relu_host_and_cuda_flags", "relu", "cuda", V, V, "extra_cflags + extra_cuda_cflags"),
    Row("cuda_inline_relu_use_pch", "relu", "cuda", V, V, "use_pch=True given by the candidate"),
    Row("cuda_inline_relu_include_paths", "relu", "cuda", V, V, "extra_include_paths + extra_ldflags"),
    Row("cuda_inline_softmax_pybind", "softmax", "cuda", V, V, "own PYBIND11_MODULE, no functions="),
    Row("cuda_inline_sum_noflags", "sum_dim", "cuda", V, V, "no flags; no extension.h in the CUDA source"),
    Row("triton_relu", "relu", "cuda", V, V, "Triton, no autotune"),
    Row("triton_softmax_autotune", "softmax", "cuda", V, V, "Triton @autotune"),
    Row("triton_autotune_ptr_key", "relu", "cuda", V, V, "@autotune key=['x_ptr'] (issue 25): tuned per process"),
    Row("triton_matmul_ieee", "matmul_rand_k64", "cuda", V, V, "tl.dot input_precision='ieee'", passes_1e2=True),
    Row("triton_matmul_tf32", "matmul_rand_k64", "cuda", TOL, TOL, "tl.dot on fp32 = TF32", passes_1e2=True),
    Row("triton_matmul_bf16", "matmul_rand_k64", "cuda", TOL, TOL, "bf16 inputs inside, fp32 accumulate",
        passes_1e2=True),
    Row("triton_partial_gemm_epilogue", "gemm_bias_relu", "cuda", TORCH, V, "level-2: cuBLAS GEMM + Triton epilogue"),
    Row("triton_variant_model_class", "relu", "cuda", V, V, "class Model, forward(x, scale=1.0)"),
    Row("triton_inplace_own_buffer", "relu", "cuda", V, V, "clone, then in place"),
    Row("triton_huge_outer_add", "outer_add_huge", "cuda", V, V, "2 GiB output"),
    Row("cupy_relu_rawkernel", "relu", "cuda", V, V, "cupy.RawKernel (NVRTC) via DLPack", needs="cupy"),
    Row("cupy_sum_rawmodule", "sum_dim", "cuda", V, V, "cupy.RawModule (NVRTC)", needs="cupy"),
]


def rows(device: str | None = None, only: str = "") -> list[Row]:
    return [r for r in ROWS if (device is None or r.device == device) and only in r.kernel]


def markdown() -> str:
    """The expectations table of docs/conformance.md."""
    out = ["| kernel | task | device | strict | partial | passes 1e-2 | note |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in ROWS:
        p = "" if r.passes_1e2 is None else str(r.passes_1e2).lower()
        out.append(f"| `{r.kernel}` | {r.task} | {r.device} | {r.strict} | {r.partial} | {p} | {r.note} |")
    return "\n".join(out)


if __name__ == "__main__":
    print(markdown())

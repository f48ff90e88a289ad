"""Ids of the rules the evaluator enforces. A verdict that is not ``valid`` because a rule
fired carries one of these in ``Verdict.rule``; tests assert on them. The numbers refer to
EVAL_RULES.md (correctness C1-C6, timing T1-T7) and to the cheat table (#1-#20)."""

from __future__ import annotations

# Correctness
OUTPUT_TYPE = "correctness.output_type"  # C1: not a plain torch.Tensor / wrong shape, dtype, device (#6)
TOLERANCE = "correctness.tolerance"  # C3: outside atol/rtol (#15, #16)
NONFINITE = "correctness.nonfinite"  # C3: NaN/inf where the reference is finite (#1, #16)
HIDDEN_SHAPE = "correctness.hidden_shape"  # C2: fails on an extra shape of the final evaluation (#14)
INPUTS_MODIFIED = "correctness.inputs_modified"  # C5 (#9)
TRIVIAL_OUTPUT = "correctness.trivial_output"  # C6: constant / zeros / input echoed (#17)
NONDETERMINISTIC = "correctness.nondeterministic"  # run twice, differ (#18)
TIMED_OUTPUT = "correctness.timed_output"  # T3: an output of a timed call is wrong (#10, #11, #12)

# Custom code
TORCH_FALLBACK = "custom_code.torch_compute"  # torch computes the answer (#2, #3)
NO_CUSTOM_KERNEL = "custom_code.no_custom_kernel"  # no kernel of the candidate's own ran (#2)
NO_REPLACEMENT = "custom_code.no_replacement"  # --rules partial: torch ran every compute op of the reference
COUNTER_DISABLED = "custom_code.counter_disabled"  # the op counting was switched off or bypassed (issue 25, class 2)
LIBRARY_COMPUTE = "custom_code.library_compute"  # a third-party library computed (numpy, BLAS, cuBLAS...) (class 3)

# Timing integrity
WALL_CLOCK = "timing.wall_clock"  # T4: parent's clock disagrees with reported times (#4, #5, #7)
TIMER_PATCHED = "timing.timer_patched"  # T7 identity checks on timing functions (#7)
THREADS = "timing.threads"  # new threads during or around the timed phase (#5)
SIDE_STREAM = "timing.side_stream"  # work on a stream the events do not cover (#4)

# Sandbox / isolation
RESULT_CHANNEL = "sandbox.result_channel"  # writes to the harness's channel (#8)
INTROSPECTION = "sandbox.introspection"  # walks gc / frames for the grader's data (#13)
NETWORK = "sandbox.network"  # (#19)
FILESYSTEM = "sandbox.filesystem"  # reads/writes outside its scratch (#19)
SUBPROCESS = "sandbox.subprocess"  # starts processes while being judged (#19, #20)
RESOURCES = "sandbox.resources"  # memory, pids, CPU, file size limits (#20)
TIMEOUT = "sandbox.timeout"  # wall timeout: the whole process group was killed (#20)
INTERFERENCE = "sandbox.interference"  # the reference failed during the judgement, healthy alone (#25)
HOOKS = "sandbox.hooks"  # a mode, trace or callback of the candidate's around a trusted step (#29-#31)

# Rule sets (EvalConfig.rules, recorded in Verdict.rules; never mixed in one ranking)
STRICT = "strict"  # the candidate's own code computes everything; torch allocates, views, copies
PARTIAL = "partial"  # torch may compute beside the candidate's kernels; >= 1 reference op replaced
RULE_SETS = (STRICT, PARTIAL)

"""Helpers shared by the whole test suite (the root tests/conftest.py exposes them as fixtures).

evalconfig  the one fast-but-complete CPU judging configuration, in-process, for RunConfig and for the CLI
judging     judge a candidate with it; assert a verdict valid (honest kernels) or caught (cheats)
cli         the harness CLI in-process (click's CliRunner) and as a subprocess (python -m harness)
skips       the documented skip reasons and the CI skip policy (KH_CI_SKIP_POLICY=1, .ci/run)
"""

"""What this machine is and can do: probes for ``harness doctor`` and the environment
fingerprint that verdicts and the leaderboard record (``harness.env.probe``)."""

from harness.env.probe import EnvReport, fingerprint, probe_all

__all__ = ["EnvReport", "fingerprint", "probe_all"]

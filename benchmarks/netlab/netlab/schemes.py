"""The compared schemes (issue 8's names) and how each one runs on netlab-agent (native/tools/netlab_agent.cpp).

ATP variants are one agent scheme (`atp`) with the engine's mode (`--mode`); the rest are agent schemes of their
own. `atp_paper` is the engine's mode `paper` (the paper's eqs. 1-3); an agent built before that mode existed
rejects `--mode paper`, which the benchmark reports as a skipped scheme instead of failing the run.
"""

from __future__ import annotations

import subprocess

ATP_MODES = {
    "atp_full": "full",
    "atp_paper": "paper",
    "atp_base": "base",
    "atp_rc": "rc",
    "atp_rc_mrdf": "rc_mrdf",
    "atp_fixtlr": "fixtlr",
    "atp_fixprio": "fixprio",
}
OTHER = {"tcp_es": "tcp_es", "tcp_ss": "tcp_ss", "tcp_exact": "tcp_exact", "udp_blast": "udp"}

# Issue 8's order: ATP Full, the paper's law, the ablations from Base up, then the baselines.
ALL = (
    "atp_full",
    "atp_paper",
    "atp_base",
    "atp_rc",
    "atp_rc_mrdf",
    "atp_fixtlr",
    "atp_fixprio",
    "tcp_es",
    "tcp_ss",
    "tcp_exact",
    "udp_blast",
)
# The incast-degree sweep and the stress configuration: ATP's two rate laws against the three TCP baselines.
SWEEP = ("atp_full", "atp_paper", "tcp_es", "tcp_ss", "tcp_exact")
# Ablation order issue 8 expects to be monotone in p50 JCT (each step at least as fast as the one before).
ABLATION_ORDER = ("atp_base", "atp_rc", "atp_rc_mrdf", "atp_full")

LABELS = {
    "atp_full": "ATP Full",
    "atp_paper": "ATP paper law",
    "atp_base": "ATP Base",
    "atp_rc": "ATP RC",
    "atp_rc_mrdf": "ATP RC+MRDF",
    "atp_fixtlr": "ATP FixTLR",
    "atp_fixprio": "ATP FixPrio",
    "tcp_es": "TCP-EarlySend",
    "tcp_ss": "TCP-SampleSend",
    "tcp_exact": "TCP-exact",
    "udp_blast": "UDP-blast",
}


def check(names: list[str]) -> list[str]:
    unknown = [n for n in names if n not in ALL]
    if unknown:
        raise ValueError(f"unknown scheme(s) {', '.join(unknown)}; known: {', '.join(ALL)}")
    return names


def is_atp(scheme: str) -> bool:
    return scheme in ATP_MODES


def agent_scheme(scheme: str) -> tuple[str, str]:
    """(the agent's per-job scheme, the agent's --mode) for one of ALL."""
    if scheme in ATP_MODES:
        return "atp", ATP_MODES[scheme]
    return OTHER[scheme], "full"


def unsupported_reason(agent: str, scheme: str) -> str | None:
    """None if the agent can run the scheme, else why not (asks the agent whether it knows the ATP mode)."""
    if not is_atp(scheme):
        return None
    mode = ATP_MODES[scheme]
    p = subprocess.run([agent, "run", "--mode", mode], capture_output=True, text=True)
    if "bad --mode" in p.stderr:
        return (
            f"netlab-agent {agent} does not know --mode {mode} (the engine's `{mode}` mode is not in this "
            f"build)"
        )
    return None

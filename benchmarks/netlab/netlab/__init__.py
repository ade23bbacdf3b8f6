"""NetApprox network lab (docs/netlab.md): an emulated congested network in Linux network namespaces and the
benchmark of ATP against TCP-based approximation that runs on it. Python 3.11 stdlib (plots: matplotlib).

Modules (run from benchmarks/netlab, or with PYTHONPATH=benchmarks/netlab):
  lab       topology, switch queue plan, host uplinks, process helpers; CLI `python3 -m netlab up|down|plan|...`
  workload  FBKV-like and FBHD-like jobs, Poisson arrivals, traffic patterns, schedule files for the agent
  schemes   the compared schemes and how each maps onto netlab-agent
  bench     the experiments (`python3 -m netlab.bench`), one fresh lab per configuration
  results   jobs.csv / summary.json: per-job ideal JCT, per-cell p50/p99, the verdict on issue 8's targets
  stats     pooling over runs, bootstrap intervals, noise, A/B and paired summaries (benchmarks/run uses them)
  report    the verdict and detail tables of a results directory (`python3 -m netlab.report`)
  plots     figures of a results directory (`python3 -m netlab.plots`)
"""

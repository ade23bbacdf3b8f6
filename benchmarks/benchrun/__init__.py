"""benchmarks/run: one entry point per benchmark and figure (docs/benchmarks.md, "One command per benchmark").

Modules:
  entries   the registry: every entry's name, what it measures, what it needs, its harness command(s), its summary
  summary   the summary every entry writes (summary.md + summary.json under benchmarks/results/<area>/<name>/):
            the header (command, commit, machine load, idle or not) and the parsers of the harnesses' outputs
  cli       `benchmarks/run --list`, `benchmarks/run NAME [--quick] [--dry-run] [--raw DIR] [-- harness args]`
"""

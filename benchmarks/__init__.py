"""The benchmarks: each script runs from the repository root as `python -m benchmarks.<name>` (`--help` says what it
measures and writes); the code they share is in benchmarks/lib/. The figures the docs show are under
benchmarks/results/, named by the manifest in benchmarks/report.py, which writes docs/benchmarks/index.md from them.
docs/benchmarks/method.md says how each is run. Nothing in the product imports this package."""

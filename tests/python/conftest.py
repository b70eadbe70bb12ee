"""pytest setup for the Python package's tests: the `gpu` marker (tests that need a GPU and run
under gshmrun, one pytest per PE: tests/python/run_gpu.sh), the package imported from the
checkout when it is not installed, and one summary line per PE at the end of a GPU run
("gshmem-pytest PE 0 of 2: 40 passed, 0 failed, 1 skipped") that run_gpu.sh adds up."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import gshmem  # noqa: F401 (an installed package wins)
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "python"))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a GPU and a launcher (tests/python/run_gpu.sh)")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    from gshmem import _init
    if not any(item.get_closest_marker("gpu") for item in getattr(config, "_gpu_items", [])):
        return
    stats = terminalreporter.stats
    count = {"passed": len([r for r in stats.get("passed", []) if r.when == "call"]),
             "failed": len(stats.get("failed", [])) + len(stats.get("error", [])),
             "skipped": len(stats.get("skipped", []))}
    pe = os.environ.get("GSHMEM_RANK", str(_init.state.pe))
    n = os.environ.get("GSHMEM_NPES", str(_init.state.npes))
    terminalreporter.write_line("gshmem-pytest PE %s of %s: %d passed, %d failed, %d skipped"
                                % (pe, n, count["passed"], count["failed"], count["skipped"]))


def pytest_collection_modifyitems(config, items):
    config._gpu_items = items

import gc
import os
import sys


def run() -> None:
    # colint's own models use no pydantic plugin; without this, building the first model scans every
    # installed distribution's entry points (importlib.metadata) for plugins: ~15-30 ms of each start-up.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # A check allocates many small, short-lived, acyclic objects (records, GEMM rows): the default
    # young-generation threshold (700) runs the cycle collector thousands of times per 1,000 configs for
    # nothing. 50,000 keeps collection (and bounds memory) while taking ~6 % off a large run
    # (scripts/bench.py, 1,000 distinct configs: 2.81 -> 2.65 s; peak memory unchanged within 1 MiB).
    gc.set_threshold(50_000, *gc.get_threshold()[1:])
    from colint.cli.main import main

    sys.exit(main())


if __name__ == "__main__":
    run()

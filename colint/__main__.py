import os
import sys


def run() -> None:
    # colint's own models use no pydantic plugin; without this, building the first model scans every
    # installed distribution's entry points (importlib.metadata) for plugins: ~15-30 ms of each start-up.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from colint.cli import main

    sys.exit(main())


if __name__ == "__main__":
    run()

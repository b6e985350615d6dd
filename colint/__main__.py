import sys


def run() -> None:
    from colint.cli import main

    sys.exit(main())


if __name__ == "__main__":
    run()

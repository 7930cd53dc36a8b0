"""``python -m vericite ...``: the same commands as the ``vericite`` script."""

from vericite.cli.main import main

if __name__ == "__main__":
    main()

"""``python -m pyaclnn`` (and the ``pyaclnn`` console script): samples, doctor, bench.

See ``pyaclnn._cli.commands`` for the commands and their exit codes.
"""
from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: sys.argv[1:]); returns the exit code."""
    from ._cli.commands import main as cli_main
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())

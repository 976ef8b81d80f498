"""``python -m polydbg``."""

from polydbg.cli import main

if __name__ == "__main__":
    main()

"""``python -m deploybot``: the same as the ``deploybot`` console script."""

from deploybot.cli.entry import main

if __name__ == "__main__":
    main()

"""`python -m testaug` runs the command-line tool."""

from testaug.cli import main

main()

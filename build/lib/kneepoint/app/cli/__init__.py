"""The `kneepoint` command line (main.py) and what it prints."""

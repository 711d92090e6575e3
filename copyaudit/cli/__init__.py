"""The command line: `main` (click group) and one module per area of commands."""

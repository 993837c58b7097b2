"""Command line: one module per command group, registered in `main.COMMAND_MODULES`."""

"""Placeholder: this command group is being built (see the issues)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this module's subcommands to ``gameai``."""

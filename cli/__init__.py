"""Shim: the command line lives in :mod:`qbo.cli` (installed as ``qbo``); ``python -m cli`` still works."""

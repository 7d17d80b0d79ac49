"""Shipped calibration snapshots (package data ``qbo.noise.calibrations``; schema in README.md)."""

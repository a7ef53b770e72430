"""Encoders: each implements the contract in base.py."""

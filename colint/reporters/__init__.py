"""Reporters: format findings and inspections. They never compute."""

"""Sharing scopes between machines: a bundle per scope (``bundle``), the places bundles are
kept (``store``: a directory or S3), and ``pull``/``push`` (``pull``)."""

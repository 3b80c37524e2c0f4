"""Kernel: configuration and layout, registry, groups, tokens, atomic files. Imports nothing from the query side, the build side or the front ends."""

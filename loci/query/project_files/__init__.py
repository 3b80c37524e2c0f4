"""Where a project keeps the facts about itself, by convention.

A question about the project itself ("what license is this under?", "how do I run
the tests here?", "what's the oldest Python version it supports?") is answered by
the files every project keeps for that: the licence file, the package manifest,
CONTRIBUTING, SECURITY, the changelog, the task runner's file. Their words rarely
match the question's ("requires-python", "engines", "xo && ava"), so ranking by
words alone leaves them out of the first five. A closed table: a topic either
appears in the question or not.

A question about what the project is, how it is used, what changed in it or which
version it is (``grammar.about_project``) is answered by the passages the project
says that in (``about.about_rows``): its README's opening or usage section, its manifest,
its docs index or quick start, its changelog's newest entry, its newest commits.

One module a question they answer:

- ``file_kinds``: which kind of file is it (a manifest, a runner's file, a README, a licence)?
- ``topics``: which project topics does a question raise, and which sections does it ask for?
- ``headings``: under which headings does a passage sit; does it only include another file?
- ``facts``: which passages hold the fact a topic asks for?
- ``about``: which passages say what the project is, how it is used, what is new in it?
- ``changelog``: is it a changelog, and where does its newest entry begin?
- ``versions``: where does a manifest state the project's own version?
- ``layout``: which source files are the main modules?
"""

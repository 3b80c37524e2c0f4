"""The text answer shows the part of a long passage that holds the question's words."""
from loci.front.render import SNIPPET_CHARS, snippet
from loci.kernel.tokens import tokenize

LONG = ("## Usage\\n\\n" + "The tool reads its settings and prints a report for every folder it visits. " * 8
        + "To follow symbolic links while walking, pass --follow on the command line.").replace("\\\\n", "\n")


def test_a_long_passage_is_shown_where_the_questions_words_are():
    shown = snippet(LONG, tokenize("How do I make it follow symbolic links?"))
    assert "follow symbolic links" in shown and shown.startswith("…") and len(shown) <= SNIPPET_CHARS + 2


def test_a_passage_whose_opening_holds_the_words_is_shown_from_its_opening():
    shown = snippet(LONG, tokenize("Which settings does the report use?"))
    assert shown.startswith("## Usage") and shown.endswith("…")


def test_a_short_passage_is_shown_whole_on_one_line():
    assert snippet("Line one.\n\n  Line two.", tokenize("line")) == "Line one. Line two."


def test_a_word_longer_than_the_shown_stretch_does_not_confuse_where_the_words_are():
    text = "start " + "x" * 400 + " middle words " + "filler " * 60 + "the symlink answer here"
    shown = snippet(text, tokenize("symlink answer"))
    assert "symlink answer" in shown and "x" * 50 not in shown


def test_a_readme_opening_is_shown_from_its_first_sentence_not_its_badges():
    text = ("tqdm\n====\n\n|Py-Versions| |Versions| |Conda-Forge-Status| |Docker|\n\n"
            '<p align="center"><img src="https://example.org/logo.svg" alt=""></p>\n\n'
            "[![CI](https://example.org/ci.svg)](https://example.org/ci)\n\n"
            "A fast, extensible progress bar for Python and CLI. See the [docs](https://tqdm.github.io).\n")
    shown = snippet(text, tokenize("what is tqdm?"))
    assert shown == "tqdm ==== A fast, extensible progress bar for Python and CLI. See the [docs](https://tqdm.github.io)."


def test_reference_style_badges_leave_nothing_behind():
    text = ("# Welcome to urfave/cli\n\n[![Go Reference][goreference_badge]][goreference_link]\n"
            "[![codecov][codecov_badge]][codecov_link]\n\ncli is a simple, fast, and fun package for building "
            "command line apps in Go.\n")
    assert snippet(text, tokenize("what is cli?")) == ("# Welcome to urfave/cli cli is a simple, fast, and fun "
                                                      "package for building command line apps in Go.")


def test_a_passage_that_is_all_markup_is_shown_as_written_not_as_nothing():
    text = "<!--\nNOTE: This first section is intentionally identical to the top-level README.md\n-->"
    assert snippet(text, []) == "<!-- NOTE: This first section is intentionally identical to the top-level README.md -->"


def test_a_rescued_route_says_the_words_did_not_decide_not_that_no_project_holds_them():
    # "HOW DO I PARSE FLAGS IN GO?": cli holds "parse" and "flag", too weakly to route on its own
    from types import SimpleNamespace

    from loci.front.render import _by_meaning

    line = _by_meaning(SimpleNamespace(semantic={"scope": "cli", "action": "rescued"}))
    assert "closest in meaning" in line and "words" in line
    assert "no project holds" not in line


def test_angle_brackets_that_are_no_html_tag_are_shown_as_written():
    text = ("The arguments may be <required> or [optional]: `.argument('<username>')`, "
            "a file like profiles/<name>.yaml, mail <ada@example.org>, and <b>bold</b> in <a href=\"x\">a link</a>.")
    shown = snippet(text, tokenize("required argument"))
    assert "<required>" in shown and "'<username>'" in shown and "profiles/<name>.yaml" in shown
    assert "<ada@example.org>" in shown
    assert "<b>" not in shown and "<a href" not in shown and "bold" in shown and "a link" in shown


def test_html_in_capitals_and_a_comment_over_lines_are_decoration():
    text = "<P ALIGN=center><IMG SRC=logo.png></P>\n<!-- a note\nover lines -->\nThe words a reader wants."
    assert snippet(text, tokenize("words")) == "The words a reader wants."

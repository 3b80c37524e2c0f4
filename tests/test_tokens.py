from loci.kernel.tokens import identifier_parts, signature, surface_forms, tokenize


def test_qualified_symbol_is_kept_whole_and_split():
    toks = tokenize("How does Session.send work?")
    assert "session.send" in toks and "session" in toks and "send" in toks


def test_compound_identifiers_are_kept_whole_and_split():
    toks = tokenize("SessionRedirectMixin calls run_agent_turn")
    assert {"sessionredirectmixin", "session", "redirect", "mixin"} <= set(toks)
    assert {"run_agent_turn", "run", "agent", "turn"} <= set(toks)


def test_identifier_parts_split_acronyms():
    assert identifier_parts("HTTPAdapter") == ["http", "adapter"]


def test_stopwords_and_plurals_are_normalised():
    assert tokenize("How do I keep the cookies?") == tokenize("keep cookie")
    assert tokenize("dependencies") == tokenize("dependency")


def test_non_latin_text_does_not_crash_and_keeps_words():
    assert "дерево" in tokenize("как обойти дерево каталогов?")
    assert tokenize("") == []


def test_signature_is_stable_within_a_process():
    assert signature() == signature() and len(signature()) == 12


def test_surface_forms_show_the_question_word_for_a_folded_token():
    forms = surface_forms("keep the cookies")
    assert forms[tokenize("cookies")[0]] == "cookies"


def test_a_redaction_mask_yields_no_tokens():
    from loci_pipeline.redact import MARKER

    masked = f"connect with password {MARKER.format('secret-assignment')} to the server"
    assert tokenize(masked) == tokenize("connect with password to the server")


def test_a_lazy_pattern_matches_as_the_compiled_one_and_compiles_once():
    import re

    from loci.kernel.lazyre import LazyPattern

    pat = LazyPattern(r"\bfo+\b", re.I)
    assert pat._compiled is None                      # nothing compiled at import
    assert pat.search("a FOO b").group(0) == "FOO"
    first = pat._compiled
    assert pat.findall("foo fooo bar") == ["foo", "fooo"]
    assert pat._compiled is first and pat.sub("x", "foo!") == "x!"


def test_a_dotfile_or_extension_as_written_is_a_token_of_its_own_besides_its_word():
    assert tokenize("load settings from a .env file") == ["load", "setting", "env", "file", ".env"]
    assert ".ipynb" in tokenize("format my (.ipynb) notebooks") and ".env" in tokenize('Config(".env")')
    # not an attribute, a sentence's end, a version or a number
    for text in ("os.environ", "x.env", "the end. Next", "v1.2", "wait .5 seconds"):
        assert not [t for t in tokenize(text) if t.startswith(".")], text


def test_a_plural_acronym_is_one_word_not_two_fragments():
    assert tokenize("IDs") == ["id"] and tokenize("URLs") == ["url"] and tokenize("APIs") == ["api"]
    assert "ls" not in tokenize("list the URLs") and "rs" not in tokenize("open PRs")
    assert identifier_parts("getURLs") == ["get", "url"] and identifier_parts("UUIDsFor") == ["uuid", "for"]
    assert tokenize("getURLs")[1:] == tokenize("getURL")[1:]   # the name as written stays whole
    assert identifier_parts("HTTPServer") == ["http", "server"] and identifier_parts("IOstream") == ["i", "ostream"]

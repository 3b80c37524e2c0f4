"""Chinese, Japanese and Korean text: no spaces between words, and Latin names written against it."""
from loci.kernel.tokens import surface_forms, tokenize


def test_a_project_name_written_against_japanese_text_is_its_own_token():
    toks = tokenize("clickでサブコマンドを作るには？")
    assert toks[0] == "click"
    assert not any("click" in t and t != "click" for t in toks)
    assert tokenize("tqdmで")[:1] == ["tqdm"]


def test_a_latin_identifier_inside_chinese_text_is_split_off_whatever_its_shape():
    toks = tokenize("如何在tqdm中使用unit_scale参数")
    assert {"tqdm", "unit_scale", "unit", "scale"} <= set(toks)
    assert not any(c.isascii() and c.isalpha() for t in toks if not t.isascii() for c in t)


def test_a_run_of_han_characters_yields_overlapping_bigrams():
    assert tokenize("进度条") == ["进度", "度条"]
    assert set(tokenize("进度条")) <= set(tokenize("如何在进度条中显示百万单位"))


def test_a_single_cjk_character_between_latin_words_is_a_token_of_itself():
    assert tokenize("tqdm和click") == ["tqdm", "和", "click"]


def test_katakana_and_hangul_runs_are_bigrammed_too():
    assert tokenize("サブコマンド") == ["サブ", "ブコ", "コマ", "マン", "ンド"]
    assert tokenize("설정파일") == ["설정", "정파", "파일"]


def test_japanese_particles_in_hiragana_yield_no_tokens():
    """Hiragana runs are grammar (で, を, には, ですか): they match every Japanese page alike."""
    assert tokenize("どうすればいいですか") == []
    assert tokenize("サブコマンドを作るには") == tokenize("サブコマンド 作")


def test_a_script_change_inside_a_cjk_run_is_a_word_boundary():
    assert "定フ" not in tokenize("設定ファイル")
    assert {"設定", "ファ", "ァイ", "イル"} <= set(tokenize("設定ファイル"))


def test_a_long_cjk_sentence_is_not_dropped_as_a_blob():
    sentence = "如何让程序在运行时检测到配置文件被修改并自动重新读取" * 4
    assert "配置" in tokenize(sentence)


def test_a_cjk_question_shows_its_bigrams_as_they_are():
    forms = surface_forms("进度条")
    assert forms["进度"] == "进度"


def test_a_project_name_written_against_cjk_text_is_read_as_a_use_of_the_name():
    from loci.query.grammar import name_uses

    strong, bare, _excluded, _marked = name_uses("pluggyでフックを実装するには？", "pluggy")
    assert strong + bare == 1
    strong, bare, _excluded, _marked = name_uses("jinja2里如何自定义过滤器？", "jinja2")
    assert strong + bare == 1
    assert name_uses("pluggyhooks", "pluggy")[:2] == (0, 0)   # a longer Latin word is still no use


def test_a_latin_name_against_cjk_text_reads_as_a_name_even_when_it_is_an_ordinary_word():
    """In Chinese, Japanese or Korean prose a word in Latin letters is a name: "clickで" is
    "with click", not the verb."""
    from loci.query.grammar import name_uses

    assert name_uses("clickでサブコマンドを作るには？", "click")[0] == 1
    assert name_uses("用 commander.js 定义子命令", "commander.js")[0] == 1
    assert name_uses("click the button to build", "click")[0] == 0

"""Translated copies of a project's docs are no evidence of its topic."""
import pytest

from conftest import setup_home
from loci.kernel.language import is_foreign, translation_language

SPANISH_README = """# algoritmos

Este repositorio contiene ejemplos de algoritmos y estructuras de datos. Cada algoritmo tiene
su propia explicación y enlaces para leer más. ¿Cómo se hace una petición? Para que el servidor
responda en unos segundos, hay que esperar. Los archivos de la tabla se cargan con el terminal
y los segundos que pasan entre cada petición del servidor se cuentan por la tabla.
"""


@pytest.mark.parametrize("path, lang", [
    ("README.es.md", "es"), ("README-fr.md", "fr"), ("Readme_zh-CN.md", "zh"),
    ("README.zh-CN.md", "zh"), ("src/graph/README.pt-BR.md", "pt"), ("docs/zh-CN/intro.md", "zh"),
    ("guide.de.md", "de"), ("docs/i18n/intro.md", "?"),
    ("README.md", None), ("docs/en/intro.md", None), ("docs/what-is.md", None),
    ("de.md", None), ("src/ml/README.md", None), ("CHANGES.rst", None),
])
def test_a_language_tag_in_the_path_marks_a_translation(path, lang):
    assert translation_language(path) == lang


def test_text_in_another_language_is_foreign_and_english_or_code_is_not():
    assert is_foreign(SPANISH_README)
    assert is_foreign("如何让程序在运行时检测到配置文件被修改并自动重新读取，而不用重启服务？")
    assert is_foreign("Как убрать лишние пустые строки и отступы в выводе шаблона?")
    assert not is_foreign("How do I make a request stop waiting when the server does not answer in time?")
    assert not is_foreign("def walk(root):\n    for entry in os.scandir(root):\n        yield entry.path\n")
    assert is_foreign("Quand je cherche des fichiers, les dossiers cachés sont ignorés par défaut.")


@pytest.fixture
def corpus(tmp_path, loci_home):
    return setup_home(tmp_path / "code", {
        "algos": {
            "README.md": "# algos\n\nExamples of sorting algorithms and graph data structures: quicksort, "
                         "heapsort, breadth-first search, linked lists and binary trees.\n",
            "README.es-ES.md": SPANISH_README,
            "src/sorting/quicksort.js": "export function quickSort(items) { return items; }\n",
        },
        "fetcher": {
            "README.md": "# fetcher\n\nAn HTTP client for humans. Send a request and read the response; "
                         "set a timeout so a request stops waiting when the server does not answer.\n",
            "fetcher/client.py": "def send_request(url, timeout=None):\n    return url\n",
        },
        "tabler": {
            "README.md": "# tabler\n\nLoad a CSV file into a SQLite table from the terminal, "
                         "without writing code.\n",
            "tabler/cli.py": "def insert_csv(path, table):\n    return path\n",
        },
    })


def test_translated_readme_words_do_not_enter_routing_vocabulary(corpus):
    from loci.query.ask import open_session

    session = open_session(keep_full_index=True)
    index = session.routing_for("")
    algos = index.position["algos"]
    for word in ("petición", "servidor", "segundos", "archivo"):
        assert algos not in index.get(word), word
    assert algos in index.get("quicksort")


def test_translated_readme_does_not_attract_a_spanish_question(corpus):
    from loci.query.ask import open_session, route_question

    r = route_question(open_session(), "¿Cómo hago que una petición HTTP deje de esperar si el servidor "
                       "no responde en unos segundos?", fast=True)
    assert "algos" not in r.scopes
    assert r.outcome == "abstained" or r.scopes[0] == "fetcher"


FRENCH = "Quand je cherche des fichiers depuis le terminal, les dossiers cachés sont ignorés par défaut et ne sont pas dans les résultats."
CHINESE = "如何让程序在运行时检测到配置文件被修改并自动重新读取，而不用重启服务？这个库会监视配置文件。"
ENGLISH = "Walk a directory tree recursively, following symbolic links and skipping hidden files when asked to."


def test_untagged_prose_in_another_language_is_a_copy_beside_english_prose():
    from loci_pipeline.chunks import make_chunk
    from loci_pipeline.index import routing_prose

    chunks = [make_chunk("s", "readme", "README.md", 1, ENGLISH * 3), make_chunk("s", "doc", "docs/fr/intro.md", 1, FRENCH),
              make_chunk("s", "readme", "README.fr.md", 1, FRENCH * 9)]
    assert [c.path for c in routing_prose(chunks)] == ["README.md"]


def test_a_project_written_in_another_language_keeps_its_prose():
    from loci_pipeline.chunks import make_chunk
    from loci_pipeline.index import routing_prose

    chunks = [make_chunk("s", "readme", "README.md", 1, CHINESE * 6), make_chunk("s", "doc", "docs/usage.md", 1, ENGLISH)]
    assert [c.path for c in routing_prose(chunks)] == ["README.md", "docs/usage.md"]


def test_a_foreign_questions_function_words_are_no_evidence():
    from conftest import routing_index
    from loci.query.router import Context, question_tokens, route

    q = "Come faccio a dire al formattatore di non toccare un blocco di codice Python che ho allineato a mano?"
    assert not {"di", "un", "ho", "che"} & set(question_tokens(q, False))
    index = routing_index({"maths": "di un ho matrix vector di un ho " * 3,
                           "styler": "formatter python code block format python style " * 3})
    r = route(q, index, Context(), {"maths": ["maths"], "styler": ["styler"]})
    assert "maths" not in r.scopes


def test_letters_are_counted_by_script_latin_extended_included():
    from loci.kernel.language import read

    r = read("Hello wörld, ça va? 日本語のテキスト Привет мир ɏ Ḁ 42_x")
    assert (r.latin_letters, r.other_letters) == (5 + 5 + 2 + 2 + 1 + 1, 8 + 6 + 3 + 1)
    assert r.other_script_share == 18 / 34

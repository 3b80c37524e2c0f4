"""One word, two spellings: the British and American forms a question and a project may use apart
("colour" in a question, ``color`` in the code; tqdm's ``colour`` argument for a question that
writes "color"). ``Question.other_spellings`` reads them off a question once; the router counts
either form as the question's word, its best evidence once (as it does for an abbreviation:
``loci.kernel.tokens.ABBREVIATIONS``), and a scope's search looks for both. Kept out of the tokenizer: changing it would make every home build its index again."""
from __future__ import annotations

import re

from loci.kernel.tokens import _stem, tokenize

_PLAIN_WORD = re.compile(r"(?<![\w.\-])[^\W\d_]+(?![\w\-]|\.\w)")

_BRITISH_AMERICAN = {
    "colour": "color", "coloured": "colored", "colouring": "coloring", "colourful": "colorful",
    "behaviour": "behavior", "favourite": "favorite", "honour": "honor", "neighbour": "neighbor",
    "flavour": "flavor", "labour": "labor", "rumour": "rumor", "licence": "license",
    "centre": "center", "metre": "meter", "litre": "liter", "catalogue": "catalog", "dialogue": "dialog",
    "analogue": "analog", "grey": "gray", "cancelled": "canceled", "cancelling": "canceling",
    "modelling": "modeling", "modelled": "modeled", "labelled": "labeled", "labelling": "labeling",
    "travelling": "traveling", "signalling": "signaling", "artefact": "artifact", "programme": "program",
    "analyse": "analyze", "analysed": "analyzed", "analysing": "analyzing", "paralyse": "paralyze",
}
for _root in ("initiali", "seriali", "deseriali", "normali", "customi", "optimi", "recogni", "organi",
              "summari", "synchroni", "authori", "finali", "visuali", "standardi", "tokeni", "saniti",
              "utili", "minimi", "maximi", "prioriti", "categori", "memori", "randomi", "locali"):
    for _ending in ("se", "sed", "ses", "sing", "sation", "ser", "sers"):
        _BRITISH_AMERICAN[_root + _ending] = _root + _ending.replace("s", "z", 1)

# the tokens of the two forms: lower-case single words, so the tokenizer's word step alone
# (``tokenize`` gives the same, at a tenth of the import time: tests/test_router.py checks it)
OTHER_SPELLING: dict[str, str] = {}
for _british, _american in _BRITISH_AMERICAN.items():
    _b, _a = _stem(_british), _stem(_american)
    if _b != _a:
        OTHER_SPELLING.setdefault(_b, _a)
        OTHER_SPELLING.setdefault(_a, _b)


def spelled_words(text: str) -> set[str]:
    """The tokens of the words ``text`` writes on their own: not the parts of a code name
    (``NO_COLOR``, ``colour.py``, ``x-colour``), whose spelling is the code's, not the asker's."""
    return {t for w in _PLAIN_WORD.findall(text) for t in tokenize(w)}

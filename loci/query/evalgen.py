"""Question families whose correct answer is known by construction, and ``loci eval``.

Generation is pure: a complete RoutingIndex, the scopes' aliases and Params in,
a list of ``GenQuestion`` out; seeded, so the same index always yields the same
questions. Judging and summarising are pure too; only ``run_generated`` and
``run_labelled`` touch a (loaded, read-only) Session.

- deictic_cwd: a pointing question asked from inside a scope; gold is that scope.
- deictic_nocwd: the same questions with no cwd; nothing says which project, so abstain.
- unanswerable: off-topic or nonsense questions no software corpus answers; abstain.
- signature: 2-4 of one scope's most distinctive routing tokens; gold is that scope.
  Alternate questions of each scope go to the calibration half and the eval half,
  so ``loci calibrate`` never fits on what ``loci eval`` reports.
"""
from __future__ import annotations

import random
from pathlib import Path
from dataclasses import dataclass
from typing import Collection, Mapping, Sequence

from loci.kernel.config import DEFAULT_PARAMS, Params
from loci.query.router import FACT, scope_rows, token_evidence
from loci.query.store import RoutingIndex
from loci.kernel.tokens import tokenize

DEICTIC_CWD, DEICTIC_NOCWD, UNANSWERABLE, SIGNATURE = "deictic_cwd", "deictic_nocwd", "unanswerable", "signature"
FAMILIES = {
    DEICTIC_CWD: ("deictic + cwd", "asked from inside a scope: must pick that scope"),
    DEICTIC_NOCWD: ("deictic, no cwd", "points at a project but names none: must abstain"),
    UNANSWERABLE: ("unanswerable", "off-topic for any codebase: must abstain"),
    SIGNATURE: ("signature", "does each scope's own vocabulary lead back to it?"),
}
CALIBRATE, EVAL = "calibrate", "eval"

DEICTIC_TEMPLATES = (
    "How do I run the tests here?",
    "What license is this project released under?",
    "How do I install this?",
    "Where is the entry point of this codebase?",
    "What does this library depend on?",
    "How do I build the documentation for this project?",
    "What changed in the most recent release of this package?",
    "How should I send a patch to this repo?",
    "How do I install it?",
    "How do I configure it?",
)
UNANSWERABLE_QUESTIONS = (
    "What is the best temperature for proofing bread dough overnight?",
    "How many moons does Jupiter have?",
    "Who won the football world cup in 1998?",
    "How do I tune a guitar to drop D?",
    "What is a sensible training plan for a first marathon?",
    "How do I stop a kitchen faucet from dripping?",
    "What is the capital of Mongolia?",
    "How long should green tea steep?",
    "Which houseplants tolerate low light?",
    "How do I blorp the quizzical fendrake until it wibbles?",
    "Should the zorbling plinth be glimmered before the vextron sings?",
    "What is the airspeed velocity of an unladen swallow?",
    # off-topic, but worded with words software also uses: the hard negatives
    "How do I thread a needle on an old sewing machine?",
    "What is the best way to stack and cache firewood for the winter?",
    "How do I filter tap water for a freshwater aquarium?",
    "Which table saw blade cuts plywood without splintering?",
    "How should I schedule watering for tomato plants in a heat wave?",
    "How do I patch a fist-sized hole in drywall?",
    "Which command should a puppy learn first, sit or stay?",
    "How do I index a printed cookbook by hand?",
    "What resting heart rate is healthy for a runner?",
    "How do I build a raised garden bed from pallets?",
    "How do I stream a football match to the television in my hotel room?",
    "Which session of the tax court handles appeals of property valuations?",
    # more of both kinds: the floors `loci calibrate` fits are quantiles of these questions'
    # closeness to each project, and a 90th percentile of two dozen moved by a third of a spread
    # when the same corpus was merely re-encoded (docs/decisions/embedding-model.md)
    "How often should I rotate the tyres on a family car?",
    "What is the difference between a crocodile and an alligator?",
    "How do I remove red wine stains from a cotton shirt?",
    "Why is the sky blue during the day and red at sunset?",
    "What should I pack for a week of hiking in the Alps?",
    "How do I descale an electric kettle with vinegar?",
    "Which wood finish holds up best on an outdoor table?",
    "How many calories does an hour of swimming burn?",
    "When is the best season to plant tulip bulbs?",
    "How do I teach a child to ride a bicycle without stabilisers?",
    "What causes the northern lights?",
    "How do I negotiate a lower rent with my landlord?",
    "Which chess opening suits a beginner who likes to attack?",
    "How long can cooked rice safely stay in the fridge?",
    "What is the origin of the Olympic torch relay?",
    "How do I get rid of fruit flies in the kitchen?",
    "Which vaccines does a cat need in its first year?",
    "How do I wax a snowboard at home?",
    "What is the tallest waterfall in Europe?",
    "How do I fold a fitted bed sheet neatly?",
    "Why do onions make people cry?",
    "How should I care for a cast-iron frying pan?",
    "What is a good beginner watercolour paper weight?",
    "How do volcanoes form along ocean ridges?",
    "How do I calm a dog during fireworks?",
    "Which grapes are used to make champagne?",
    "How do I reupholster a dining chair seat?",
    "What is the etiquette for tipping a taxi driver in Japan?",
    "How can I improve my posture while sitting at a desk?",
    "What does a midwife do during a home birth?",
    "How do I sharpen kitchen knives with a whetstone?",
    "Why do cats purr?",
    "How much water does a camel drink at once?",
    "Which constellations are visible in the southern winter sky?",
    "How do I brew kombucha safely at home?",
    "What is the history of the Silk Road?",
    "Which hrumple of the glorbish tanker yeets the wobble first?",
    "Can a snorfling quibbet be fastened before the murgle tides?",
    "How do I defrost a chest freezer quickly?",
    "What is the rule for the offside position in ice hockey?",
    # hard negatives: everyday questions in words a programmer also uses
    "How do I merge two lanes of traffic safely on a motorway?",
    "Which branch of the local library is open on Sundays?",
    "How do I lock a bicycle so the front wheel cannot be stolen?",
    "What is the queue like at the passport office on Mondays?",
    "How do I pipe buttercream roses onto a birthday cake?",
    "Which port in Portugal makes the sweetest fortified wine?",
    "How do I commit a long poem to memory?",
    "What is the best shell to use for a seaside crafts project?",
    "How do I batch cook a week of lunches on a Sunday?",
    "Which driver should I use to tee off on a par five?",
    "How should a waiter serve a table of twelve at a wedding?",
    "How do I build a bird house that squirrels cannot enter?",
    "What token do I need to ride the subway in Istanbul?",
    "How do I test the pH of garden soil without a kit?",
    "How do I deploy a sail when the wind changes suddenly?",
    "Which key signature has three sharps?",
    "How do I format a wedding invitation in calligraphy?",
    "What is the heap of compost supposed to smell like?",
    "How do I handle a child who throws exceptions to every house rule?",
    "Which framework of scaffolding is safest for painting a two-storey house?",
    "How do I parse the small print of a mobile phone contract?",
    "How do I record birdsong with a phone in a windy field?",
    "What is the return policy for shoes bought in a sale?",
    "How do I plot a vegetable garden on a north-facing slope?",
    "Which string gauge suits a beginner on an acoustic guitar?",
    "How do I signal a turn when cycling in heavy traffic?",
    "How do I mount a heavy mirror on a plaster wall?",
    "How do I export olive oil from Greece to a shop abroad?",
    "Which module of the driving theory test covers road signs?",
    "How do I debug a sewing machine that keeps skipping stitches?",
    "How do I render fat from a duck breast without burning it?",
    "What is the runtime of the longest opera ever staged?",
)
# off-topic questions in fifteen of the multilingual encoder's languages: `loci calibrate` fits
# how close such a question comes to a project in meaning (``multilingual_route_floor``). Not the
# sixteen of bench/data/foreign-offtopic.txt, which check the fitted floor from outside.
UNANSWERABLE_FOREIGN = (
    'ما هي أفضل طريقة لتنظيف السجاد الصوفي في المنزل؟',
    'كم يوما يحتاج الجمل للعيش بدون ماء في الصحراء؟',
    'Wie viele Eier braucht man für einen klassischen Käsekuchen?',
    'Welcher Berg in den Alpen ist für Anfänger am leichtesten zu besteigen?',
    '¿A qué edad suelen empezar a caminar los bebés?',
    '¿Cuál es el mejor momento del día para regar el césped en verano?',
    "Quel est le plus long fleuve d'Afrique et quels pays traverse-t-il ?",
    'Comment garder les roses coupées fraîches plus longtemps dans un vase ?',
    'Quante ore di sonno servono a un gatto adulto ogni giorno?',
    "Qual è il periodo migliore per vedere l'aurora boreale in Norvegia?",
    '東京から大阪まで新幹線で何時間かかりますか？',
    '梅雨の時期に洗濯物を早く乾かすコツはありますか？',
    '김치를 담글 때 배추를 얼마나 오래 절여야 하나요?',
    '제주도에서 가장 아름다운 해변은 어디인가요?',
    'Hoe lang moet je een zachtgekookt ei koken voor het ontbijt?',
    'Welke tulpensoorten bloeien het vroegst in het voorjaar?',
    'Jak długo trzeba gotować barszcz czerwony na Wigilię?',
    'Które góry w Polsce są najlepsze na zimowe wędrówki?',
    'Quantos dias leva para uma semente de abacate germinar na água?',
    'Qual é o prato típico mais famoso da culinária portuguesa?',
    'Сколько калорий в тарелке борща со сметаной?',
    'Какая погода обычно бывает на Байкале в феврале?',
    'ควรให้อาหารปลาทองวันละกี่ครั้ง?',
    'ช่วงเดือนไหนเหมาะที่สุดสำหรับเที่ยวเชียงใหม่?',
    "İstanbul'da en güzel gün batımı hangi semtten izlenir?",
    'Türk kahvesi nasıl köpüklü pişirilir?',
    '月饼一般可以保存多长时间？',
    '去杭州西湖旅游最好选择哪个季节？',
    '臺北哪一家夜市的小吃最有名？',
    '颱風來之前家裡應該準備哪些物品？',
)
# every word around the slot is a stopword, so the question's tokens are the signature's own
SIGNATURE_TEMPLATES = ("What is {terms}?", "How do I use {terms}?", "Where is {terms}?")
SIGNATURE_PER_SCOPE = 14
SIGNATURE_POOL = 12
MIN_TOKEN_CHARS = 3


@dataclass(frozen=True)
class GenQuestion:
    """One generated question; ``gold`` is empty when abstaining is the only right answer."""

    id: str
    family: str
    question: str
    cwd_scope: str | None = None
    gold: tuple[str, ...] = ()
    half: str = ""               # signature only: "calibrate" or "eval"

    @property
    def should_abstain(self) -> bool:
        return not self.gold

    def to_json(self) -> dict:
        return {"id": self.id, "family": self.family, "question": self.question,
                "cwd_scope": self.cwd_scope, "gold": list(self.gold), "half": self.half}


def deictic_questions(scopes: Sequence[str]) -> list[GenQuestion]:
    """Every deictic template from inside every scope, and each once with no cwd."""
    out = [GenQuestion(f"deictic-cwd-{s}-{j}", DEICTIC_CWD, q, cwd_scope=s, gold=(s,))
           for s in scopes for j, q in enumerate(DEICTIC_TEMPLATES)]
    out += [GenQuestion(f"deictic-nocwd-{j}", DEICTIC_NOCWD, q) for j, q in enumerate(DEICTIC_TEMPLATES)]
    return out


def unanswerable_questions() -> list[GenQuestion]:
    return [GenQuestion(f"unanswerable-{j}", UNANSWERABLE, q) for j, q in enumerate(UNANSWERABLE_QUESTIONS)]


def _alias_tokens(aliases: Mapping[str, Sequence[str]]) -> set[str]:
    return {t for names in aliases.values() for a in names for t in tokenize(a)}


def _usable(token: str, banned: set[str]) -> bool:
    if token.startswith(FACT) or len(token) < MIN_TOKEN_CHARS or not token.replace("_", "").isalpha():
        return False
    parts = tokenize(token)
    return token in parts and not banned.intersection(parts)


def distinctive_tokens(index: RoutingIndex, aliases: Mapping[str, Sequence[str]] | None = None,
                       params: Params = DEFAULT_PARAMS, limit: int = SIGNATURE_POOL,
                       shadowed: Collection[str] = ()) -> dict[str, list[str]]:
    """Per scope, its ``limit`` most distinctive tokens, best first.

    A token qualifies for a scope when few scopes hold it (at most the router's
    distinctive share) and it is not part of any scope's name; tokens rank by the
    router's own per-token evidence, then by weight. ``shadowed`` scopes (copies of another,
    ``router.shadowed_copies``) are counted nowhere and get none, as the router counts them.
    """
    if not index.complete:
        raise ValueError("distinctive_tokens needs the complete routing index")
    banned = _alias_tokens(aliases or {})
    skip = scope_rows(index, shadowed)
    cap = max(1, int((len(index.scopes) - len(skip)) * params.distinctive_max_share))
    ranked: dict[int, list[tuple[float, float, str]]] = {i: [] for i in range(len(index.scopes)) if i not in skip}
    for token, rows in index.postings.items():
        if len(rows) - len(skip.intersection(rows)) > cap or not _usable(token, banned):
            continue
        for i, ev in token_evidence(index, token, params, skip).items():
            ranked[i].append((-round(ev, 6), -rows[i], token))
    return {index.scopes[i]: [t for *_k, t in sorted(rows)[:limit]] for i, rows in ranked.items()}


def signature_questions(index: RoutingIndex, aliases: Mapping[str, Sequence[str]] | None = None,
                        params: Params = DEFAULT_PARAMS, *, per_scope: int = SIGNATURE_PER_SCOPE,
                        seed: int = 0, shadowed: Collection[str] = ()) -> list[GenQuestion]:
    """Per scope, up to ``per_scope`` questions of 2-4 of its distinctive tokens, alternately
    assigned to the calibration and the eval half."""
    out: list[GenQuestion] = []
    for scope, pool in distinctive_tokens(index, aliases, params, shadowed=shadowed).items():
        if len(pool) < 2:
            continue
        rng = random.Random(f"{seed}:{scope}")
        seen: set[tuple[str, ...]] = set()
        for _attempt in range(per_scope * 4):
            if len(seen) >= per_scope:
                break
            terms = tuple(rng.sample(pool, min(len(pool), rng.choice((2, 3, 4)))))
            if tuple(sorted(terms)) in seen:
                continue
            j = len(seen)
            seen.add(tuple(sorted(terms)))
            text = SIGNATURE_TEMPLATES[j % len(SIGNATURE_TEMPLATES)].format(terms=" ".join(terms))
            out.append(GenQuestion(f"signature-{scope}-{j}", SIGNATURE, text, gold=(scope,),
                                   half=CALIBRATE if j % 2 == 0 else EVAL))
    return out


def generate(index: RoutingIndex, aliases: Mapping[str, Sequence[str]] | None = None,
             params: Params = DEFAULT_PARAMS, *, seed: int = 0, shadowed: Collection[str] = ()) -> list[GenQuestion]:
    """Every family, in a fixed order (``shadowed``: copies asked nothing of their own)."""
    return [*deictic_questions(index.scopes), *unanswerable_questions(),
            *signature_questions(index, aliases, params, seed=seed, shadowed=shadowed)]


def eval_questions(questions: Sequence[GenQuestion]) -> list[GenQuestion]:
    """What ``loci eval`` reports on: everything but the calibration half of the signatures."""
    return [q for q in questions if q.half != CALIBRATE]


def calibration_questions(questions: Sequence[GenQuestion]) -> tuple[list[GenQuestion], list[GenQuestion]]:
    """(routable, unroutable) samples for ``loci calibrate``: the calibration half of the
    signatures, and the unanswerable plus deictic-without-cwd questions."""
    routable = [q for q in questions if q.family == SIGNATURE and q.half == CALIBRATE]
    unroutable = [q for q in questions if q.family in (UNANSWERABLE, DEICTIC_NOCWD)]
    return routable, unroutable


# --- scoring routed results ---------------------------------------------------------------

@dataclass(frozen=True)
class Judged:
    """One generated question and what routing returned for it."""

    question: GenQuestion
    outcome: str
    scopes: tuple[str, ...]
    reason: str | None

    @property
    def correct(self) -> bool:
        if self.question.should_abstain:
            return self.outcome == "abstained"
        return self.outcome == "routed" and bool(self.scopes) and self.scopes[0] == self.question.gold[0]

    def to_json(self) -> dict:
        return {**self.question.to_json(), "outcome": self.outcome, "scopes": list(self.scopes),
                "reason": self.reason, "correct": self.correct}


@dataclass(frozen=True)
class FamilyScore:
    family: str
    n: int
    correct: int
    mean_scopes: float | None   # scopes returned per routed question, for families with a gold scope

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    def to_json(self) -> dict:
        label, measures = FAMILIES[self.family]
        return {"family": self.family, "label": label, "n": self.n, "correct": self.correct,
                "accuracy": self.accuracy, "mean_scopes": self.mean_scopes, "measures": measures}


@dataclass(frozen=True)
class EvalReport:
    scopes: int
    families: list[FamilyScore]
    judged: list[Judged]

    @property
    def baseline(self) -> float | None:
        """What picking one scope at random scores on a one-scope question."""
        return 1 / self.scopes if self.scopes else None

    @property
    def misses(self) -> list[Judged]:
        return [j for j in self.judged if not j.correct]

    def to_json(self, misses: bool = True) -> dict:
        out = {"scopes": self.scopes, "baseline": self.baseline,
               "families": [f.to_json() for f in self.families]}
        if misses:
            out["misses"] = [j.to_json() for j in self.misses]
        return out


def summarise(judged: Sequence[Judged], n_scopes: int) -> EvalReport:
    """Per family (in FAMILIES order) how many were right, and how many scopes routing returned."""
    families = []
    for family in FAMILIES:
        rows = [j for j in judged if j.question.family == family]
        if not rows:
            continue
        routed = [len(j.scopes) for j in rows if j.outcome == "routed" and j.question.gold]
        mean = round(sum(routed) / len(routed), 2) if routed else None
        families.append(FamilyScore(family, len(rows), sum(j.correct for j in rows), mean))
    return EvalReport(n_scopes, families, list(judged))


def render(report: EvalReport, misses: bool = False) -> list[str]:
    """The eval table (and, with ``misses``, each wrong answer with what came back)."""
    base = f"{100 * report.baseline:.1f}%" if report.baseline is not None else "-"
    lines = [f"{report.scopes} scopes | picking one at random would score {base}", "",
             f"{'family':<18}{'n':>5}{'correct':>9}{'scopes':>8}  what it measures"]
    for f in report.families:
        label, measures = FAMILIES[f.family]
        mean = f"{f.mean_scopes:.1f}" if f.mean_scopes is not None and f.family == SIGNATURE else "-"
        lines.append(f"{label:<18}{f.n:>5}{100 * (f.accuracy or 0):>8.1f}%{mean:>8}  {measures}")
    if any(f.family == SIGNATURE for f in report.families):
        lines += ["", "signature questions are built from each scope's most distinctive words: a best case,",
                  "not a typical question; a low score says your projects share their vocabulary."]
    if misses:
        lines += ["", f"misses ({len(report.misses)}):"]
        for j in report.misses:
            want = "abstain" if j.question.should_abstain else j.question.gold[0]
            got = ("abstained" + (f" ({j.reason})" if j.reason else "")) if j.outcome == "abstained" \
                else f"{j.outcome} {', '.join(j.scopes)}"
            cwd = f" [cwd {j.question.cwd_scope}]" if j.question.cwd_scope else ""
            lines.append(f"  {j.question.question}{cwd}\n      wanted {want}, got {got}")
    return lines


# --- running them (reads the session's artifacts, writes nothing) -------------------------

def _cwd_of(session, scope: str | None, checkouts=None):
    """The folder of the scope a question is asked from (None: no cwd, or an unknown scope). A
    scope pulled from elsewhere has no folder here; with ``checkouts`` (a folder holding a clone of
    each repository under its scope's name) the question is asked from that clone, as a team
    member asks from their own."""
    if not scope:
        return None
    found = next((s for s in session.registry.scopes if s.name == scope), None)
    if found is None:
        return None
    if found.kind == "pulled" and checkouts is not None:
        return str(Path(checkouts) / scope)
    return found.path


def run_generated(session, *, seed: int = 0) -> EvalReport:
    """Generate the families on the session's index (with the shipped Params, so the split
    matches calibration's) and route the eval questions exactly as `loci ask` does
    (``route_question``: the vocabulary route, the vectors' second opinion, veto and gates)."""
    from loci.query.ask import route_question

    index = session.routing_for("")
    judged = []
    for q in eval_questions(generate(index, session.aliases(), DEFAULT_PARAMS, seed=seed)):
        r = route_question(session, q.question, cwd=_cwd_of(session, q.cwd_scope))
        judged.append(Judged(q, r.outcome, tuple(r.scopes), r.reason))
    return summarise(judged, len(index.scopes))


def run_labelled(session, questions: Sequence[Mapping], fast: bool = False,
                 checkouts=None) -> tuple[object, dict[str, dict | None], list[str]]:
    """Ask each labelled question with `loci ask` (``cwd`` names a scope; null means none; ``fast``:
    as `ask --fast`, words only; ``checkouts``: where the clones of pulled scopes are, ``_cwd_of``)
    and score it with ``loci.query.scoring``. Returns (Report, results by id, notes about questions
    that could not run)."""
    from loci.query import scoring
    from loci.query.ask import ask
    from loci.kernel.errors import UsageError

    results: dict[str, dict | None] = {}
    notes = []
    for q in questions:
        cwd_name = q.get("cwd")
        cwd = _cwd_of(session, cwd_name, checkouts)
        if cwd_name and cwd is None:
            notes.append(f"{q['id']}: cwd scope {cwd_name!r} is not registered; counted as a miss")
            results[q["id"]] = None
            continue
        try:
            results[q["id"]] = ask(session, q["question"], cwd=cwd, fast=fast).to_json()
        except UsageError as exc:
            notes.append(f"{q['id']}: {exc}")
            results[q["id"]] = None
    return scoring.score(questions, results), results, notes


def labelled_misses(report, results: Mapping[str, dict | None], questions: Sequence[Mapping]) -> list[dict]:
    """The labelled questions routing got wrong, with what came back."""
    by_id = {q["id"]: q for q in questions}
    out = []
    for s in report.questions:
        wrong = (s.error or s.top1 is False or (s.set_prf is not None and s.set_prf[2] < 1)
                 or s.should_abstain != s.abstained)
        if wrong:
            r = results.get(s.id) or {}
            out.append({"id": s.id, "family": s.family, "question": by_id[s.id]["question"],
                        "gold": list(by_id[s.id]["gold_scopes"]), "mode": s.mode,
                        "outcome": r.get("outcome", "error"), "scopes": list(r.get("scopes") or [])})
    return out

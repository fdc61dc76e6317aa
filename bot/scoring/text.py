"""Plain-text helpers for grading: language, sentence units, negation, identifiers."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from bot.content.schema import Language

_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_LATIN = re.compile(r"[a-z]", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+|(?<=:)\s+(?=[-•*])")
_CLAUSE_SPLIT = re.compile(
    r",\s+(?=(?:but|while|whereas|although|so|because|а|но|однако|зато|хотя|поэтому|потому)\b)"
    r"|\s+(?=(?:but|however|но|однако)\b)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[\w.()\[\]_]+", re.UNICODE)

# "I don't know" in the forms people type; matched only against short answers.
_DONT_KNOW = re.compile(
    r"\b(?:i\s*(?:do\s*not|don'?t|dont)\s*know|no\s+idea|idk|not\s+sure|no\s+clue|pass|"
    r"не\s*знаю|незнаю|без\s+понятия|понятия\s+не\s+имею|хз|не\s+помню|затрудняюсь|пас)\b",
    re.IGNORECASE,
)

# Words that flip the polarity of a statement; counted by parity.
_NEGATORS = re.compile(
    r"\b(?:not|no|never|neither|nor|without|nothing|none|cannot|isn't|aren't|doesn't|don't|"
    r"didn't|won't|can't|shouldn't|wasn't|weren't|hasn't|haven't|"
    r"doesnt|dont|didnt|isnt|arent|cant|wont|shouldnt|wasnt|"
    r"не|нет|ни|никогда|без|ничего|нельзя)\b|n't\b",
    re.IGNORECASE,
)
# Markers that say the sentence rejects a statement ("that's a myth").
_REJECTION = re.compile(
    r"\b(?:myth|misconception|wrong|false|incorrect|mistake|common\s+error|"
    r"миф|заблуждение|неверно|неправда|ошибочно|ошибка\s+думать|путают)\b",
    re.IGNORECASE,
)

# A sentence that reports a belief as other people's or as a mistake ("many think X", "a common
# mistake is to assume X") is about the misconception, not a statement of it; found in how the
# rejecting answers of content/eval and content/heldout are worded. Not bare "false", "wrong"
# or "ошибка": "requires_grad=False" and "иначе будет ошибка" state facts.
_REPORTED = re.compile(
    r"\b(?:myth|misconception|common\s+(?:mistake|error)|gotcha|"
    r"people\s+(?:\w+\s+)?(?:say|think|assume|believe|expect|get)|"
    r"many\s+(?:\w+\s+)?(?:think|believe|assume)|some\s+(?:people\s+)?(?:think|believe|assume)|"
    r"(?:easy|tempting)\s+to\s+(?:assume|think)|"
    r"миф|заблуждение|ошибочно|ошибка\s+думать|путают|(?:частая|распространённая)\s+ошибка|"
    r"(?:многие|часто|иногда|некоторые)\s+(?:\w+\s+)?(?:думают|считают|говорят|полагают|путают)|"
    r"бытует|не\s+стоит\s+думать|как\s+(?:многие|иногда|часто)\s+(?:думают|считают|кажется))",
    re.IGNORECASE,
)

# Python's literals state a value ("requires_grad=False", "the grads are None"), not a negation:
# a literal after "=" or "(" in any case, or a capitalised one anywhere but the start ("None of
# the weights…" is prose).
_CODE_LITERAL = re.compile(r"(?i:[=(]\s*(?:false|none)\b)|(?<=.)\b(?:False|None)\b")


@lru_cache(maxsize=8192)  # pure; asked of every sentence several times per grade
def detect_language(text: str) -> Language:
    """'ru' when Cyrillic letters dominate, else 'en'."""
    cyr = len(_CYRILLIC.findall(text))
    lat = len(_LATIN.findall(text))
    return "ru" if cyr > 0 and cyr >= lat * 0.5 else "en"


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip()


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def is_dont_know(text: str) -> bool:
    """A short answer whose substance is "I don't know"."""
    clean = normalize(text)
    if not clean or set(clean) <= set("?!.-… "):
        return True
    return len(words(clean)) <= 6 and bool(_DONT_KNOW.search(clean))


# Saying outright that one does not know or has not used the thing (not "not sure", which
# often comes before a correct guess).
_ADMITS = re.compile(
    r"\b(?:i\s*(?:do\s*not|don'?t|dont)\s*(?:really\s+)?know|no\s+idea|idk|no\s+clue|"
    r"(?:don'?t|do\s+not|can'?t|cannot)\s+(?:really\s+)?remember|can'?t\s+(?:say|compare|tell)|"
    r"couldn'?t\s+(?:really\s+)?(?:tell|say|explain)|"
    r"never\s+(?:really\s+|actually\s+)?(?:used|wrote|written|worked|tried|needed|looked|heard|"
    r"touched|implemented|had\s+to|profiled|done)|"
    r"haven'?t\s+(?:really\s+|actually\s+)?(?:used|done|tried|worked)|"
    r"not\s+something\s+i(?:'?ve|\s+have)\s+(?:really\s+)?(?:done|used|tried|worked)|"
    r"не\s*(?:(?:очень|особо)\s+)?знаю|незнаю|без\s+понятия|понятия\s+не\s+имею|хз|"
    r"не\s+(?:помню|вспомню|скажу)|"
    r"не\s+(?:работал|пользовался|сталкивался|писал|пробовал|трогал|слышал|занимался|в\s+теме|"
    r"приходилось)|"
    r"только\s+слышал)",
    re.IGNORECASE,
)


def admits_not_knowing(text: str, limit: int = 24) -> bool:
    """A short answer that says it does not know ("torch.tensor, the rest I don't know")."""
    return len(words(text)) <= limit and bool(_ADMITS.search(normalize(text)))


def opens_with_admission(text: str, limit: int = 80) -> bool:
    """An answer of at most `limit` words whose first sentence says it does not know or never
    used the thing ("Honestly I haven't used torch.export, only compile. I think it…"): what
    follows is a guess. On every labelled set read so far (4,400 answers) the 13 answers of 25
    to 80 words that open so all have human grades of 0 or 1."""
    if len(words(text)) > limit:
        return False
    units = split_units(normalize(text), clauses=False)
    return bool(units) and bool(_ADMITS.search(units[0]))


# "Not sure" and "never looked into it" said in passing; with _ADMITS, an admission anywhere.
_UNSURE = re.compile(
    r"\b(?:not\s+(?:really\s+|totally\s+)?(?:sure|familiar)|не\s+уверен|не\s+знаком|"
    r"не\s+(?:очень\s+)?разбирал(?:ся|ась))",
    re.IGNORECASE,
)
# Words of a guess: "I think", "наверное", "um", a trailing "..." or a question asked back.
_GUESSING = re.compile(
    r"\b(?:кажется|наверное|вроде|как-то|i\s+think|i\s+guess|probably|maybe|perhaps|um+|"
    r"hmm+|эм+|ну|kind\s+of|что-то\s+про|something\s+like)\b|\.\.\.|…|\?",
    re.IGNORECASE,
)


# Softer ways of saying "I don't know this" that, alone, a real answer also uses ("I'd have to
# check the docs", «не подскажу», «ни разу не»); none repeats a phrase of _ADMITS or _UNSURE, so
# that one phrase counts once.
_DEFERS = re.compile(
    r"\b(?:(?:i'?d|i\s+would)\s+(?:honestly\s+)?have\s+to\s+(?:look|check|read|google)|"
    r"(?:look|check)\s+(?:it|that)\s+up|can'?t\s+really\s+(?:name|say|explain)|"
    r"never\s+(?:really\s+)?(?:thought|dug)|haven'?t\s+(?:really\s+)?(?:looked|dug|thought)|"
    r"ни\s+разу\s+не|не\s+возьмусь|не\s+(?:задумывал(?:ся|ась)|подскажу|вникал|копал)|"
    r"надо\s+(?:бы\s+)?(?:смотреть|посмотреть|гуглить|глянуть)|только\s+по\s+названию)",
    re.IGNORECASE,
)
# Words that soften a confession but say nothing of knowing ("honestly", "sorry", «честно»):
# counted as hedges only beside a real admission.
_SOFTENERS = re.compile(
    r"\b(?:sorry|to\s+be\s+honest|honestly|честно(?:\s+говоря)?)", re.IGNORECASE
)


def guesses_and_admits(text: str, limit: int = 80, hedges: int = 4) -> bool:
    """An answer of at most `limit` words that says twice that it does not know, is not sure or
    would have to look it up ("Not really familiar with DTensor… I haven't used
    parallelize_module, so I can't really explain them"), or says so once and hedges
    throughout: `hedges` or more such admissions, softeners and words of a guess together ("Ну,
    DataLoader вроде грузит данные... Наверное, есть shuffle? Остальное не помню"). On the
    7,074 labelled answers of content/eval to blind15 the hedges reached 34 more "don't know"
    answers than three guessing words beside one admission did, and no more answers with a
    human grade above 1.5 (one partial answer graded 5, "the model has no idea about order",
    reached by both); with three hedges, 2 more partial answers graded 4 were reached. Two
    admissions alone: see docs/grading.md (seventeenth attempt)."""
    clean = normalize(text)
    if len(words(clean)) > limit:
        return False
    admissions = sum(len(pattern.findall(clean)) for pattern in (_ADMITS, _UNSURE, _DEFERS))
    others = len(_SOFTENERS.findall(clean)) + len(_GUESSING.findall(clean))
    return admissions >= 2 or (admissions >= 1 and admissions + others >= hedges)


def is_hedged(text: str, limit: int = 16) -> bool:
    """A short answer that says "I don't know" among other words ("no idea, I only used keras")."""
    return len(words(text)) <= limit and bool(_DONT_KNOW.search(normalize(text)))


@lru_cache(maxsize=8192)  # pure; the head's features and the grader's credit both ask it
def reports_belief(text: str) -> bool:
    """Whether a sentence speaks of a belief as a mistake or as what others think."""
    return bool(_REPORTED.search(text))


def split_units(text: str, limit: int = 48, clauses: bool = True) -> list[str]:
    """Sentences, plus the clauses of sentences that contrast two statements."""
    units: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = normalize(sentence).lstrip("-•* ")
        if len(words(sentence)) < 2:
            continue
        units.append(sentence)
        if not clauses:
            continue
        parts = [normalize(c) for c in _CLAUSE_SPLIT.split(sentence)]
        parts = [c for c in parts if len(words(c)) >= 3]
        if len(parts) > 1:
            units.extend(parts)
    whole = normalize(text)
    if whole and (whole not in units or len(units) > 1):
        # The whole answer is the last unit whenever there are several, however long the
        # answer is: the grader reads the last unit as the whole answer and checks the ones
        # before it for misconceptions. A one-sentence answer with clauses lists its sentence
        # twice (encoded once): as a sentence to check, and as the whole.
        return [*units[: limit - 1], whole]
    return units[:limit]


@lru_cache(maxsize=8192)  # pure; asked of each claim once per sentence of every answer
def polarity(text: str) -> int:
    """+1 for an affirmative statement, -1 for a negated or rejected one."""
    prose = _CODE_LITERAL.sub(" ", text.strip())
    flips = len(_NEGATORS.findall(prose)) + len(_REJECTION.findall(prose))
    return -1 if flips % 2 else 1


def mentions(text: str, term: str) -> bool:
    """Whether an identifier (an API name) appears in the text, case-insensitively."""
    return bool(named_terms(text, [term]))


def named_terms(text: str, terms: Iterable[str]) -> set[str]:
    """The identifiers among `terms` that the text mentions (see `mentions`), the text
    lower-cased once for all of them."""
    haystack = text.lower().replace("`", "")
    # Each pattern needs its word as a plain substring first: most terms are not in the text.
    return {
        term
        for term in terms
        if any(word in haystack and p.search(haystack) for word, p in _term_patterns(term))
    }


@lru_cache(maxsize=4096)  # the bank has about 400 terms; compiled once, not per grade
def _term_patterns(term: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(the word a match contains, its pattern) for each way the term can be named."""
    core = term.strip().strip("`").rstrip("()").lower()
    if not core:
        return ()
    whole = (core, re.compile(r"(?<![\w])" + re.escape(core) + r"(?![\w])"))
    # "optimizer.zero_grad()" is also signalled by "opt.zero_grad" or "zero_grad()": the last
    # dotted part counts when it still looks like code (an underscore, a call, or a dot before),
    # so "self.training" is not matched by the plain word "training".
    tail = core.rsplit(".", 1)[-1]
    if tail == core or len(tail) < 4:
        return (whole,)
    word = re.escape(tail)
    if "_" in tail:
        return whole, (tail, re.compile(r"(?<![\w])" + word + r"(?![\w])"))
    return whole, (tail, re.compile(r"\." + word + r"(?![\w])|(?<![\w])" + word + r"\("))


_STEM_WORD = re.compile(r"[a-zа-яё_]{4,}", re.IGNORECASE)


def stems(text: str) -> set[str]:
    """Crude stems (first five letters of words of four letters or more), for word overlap.

    Enough to tell whether an answer talks about the question's subject at all, in any language,
    where the English embedding model sees any two Russian texts as somewhat alike.
    """
    return {w.lower()[:5] for w in _STEM_WORD.findall(text)}


def overlap(answer: str, vocabulary: set[str]) -> float:
    """Share of the answer's stems that occur in the question's vocabulary."""
    own = stems(answer)
    return len(own & vocabulary) / len(own) if own else 0.0

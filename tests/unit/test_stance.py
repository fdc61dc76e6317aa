"""The stance model's data, training pipeline, artefact and its use by the grader."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import yaml

from bot.content.loader import QuestionBank
from bot.content.stance import (
    ANSWER_SOURCES,
    ANSWERS_FILE,
    CORRECTIONS_DIR,
    MINIMUM,
    Examples,
    PitfallStance,
    StanceError,
    StanceFile,
    example_count,
    load_answer_sentences,
    load_stance,
    stance_problems,
)
from bot.scoring.grader import Grader
from bot.scoring.stance.judge import candidates, verdicts
from bot.scoring.stance.model import (
    ADAPTER_FILE,
    StanceConfig,
    StanceModel,
    StanceModelError,
    load_stance_model,
)
from bot.scoring.stance.pairs import (
    ANSWER_REPEAT,
    ASSERTS,
    NEITHER,
    REJECTS,
    answer_pairs,
    build_pairs,
    holdout_split,
)
from bot.scoring.stance.training import TrainOptions, classification, train


def test_every_pitfall_of_the_bank_has_its_stance_examples(bank: QuestionBank) -> None:
    assert stance_problems(bank, load_stance()) == []


def _examples(count: int, text: str) -> Examples:
    return Examples(
        ru=tuple(f"{text} {i} ru" for i in range(count)),
        en=tuple(f"{text} {i}" for i in range(count)),
    )


def test_content_check_names_what_is_missing_short_or_copied(bank: QuestionBank) -> None:
    question = bank.questions["train-vs-eval"]
    first, second = question.pitfalls
    copied = PitfallStance(
        id=first.id,
        asserts=Examples(
            ru=tuple(f"утверждение {i}" for i in range(MINIMUM["asserts"])),
            en=(
                f"Honestly, {first.claim.en.lower()} Always.",
                *tuple(f"assertion {i}" for i in range(MINIMUM["asserts"] - 1)),
            ),
        ),
        rejects=_examples(MINIMUM["rejects"] - 1, "rejection"),
        neither=_examples(MINIMUM["neither"], "neutral"),
    )
    unknown = PitfallStance(
        id="no-such-pitfall",
        asserts=_examples(4, "a"),
        rejects=_examples(4, "r"),
        neither=_examples(2, "n"),
    )
    stance = {question.id: StanceFile(question=question.id, pitfalls=(copied, unknown))}
    problems = [
        p for p in stance_problems(bank, stance) if p.startswith(("train-vs-eval", "stance/train"))
    ]
    assert f"train-vs-eval/{first.id}: 3 rejects examples in ru, 4 needed" in problems
    assert f"train-vs-eval/{first.id}: 3 rejects examples in en, 4 needed" in problems
    assert any(
        p.startswith(f"train-vs-eval/{first.id}: an assertion copies the claim") for p in problems
    )
    assert f"train-vs-eval/{second.id}: no stance examples" in problems
    assert "stance/train-vs-eval.yaml: no pitfall no-such-pitfall in the question" in problems
    # Every other question has no examples at all in this stance set.
    assert any(
        p.startswith("zero-grad/") and p.endswith("no stance examples")
        for p in stance_problems(bank, stance)
    )


def test_the_cli_content_check_fails_on_missing_stance_examples(
    bank: QuestionBank, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.content_commands import content_check

    assert content_check(bank) == 0
    assert content_check(bank, tmp_path) == 1  # an empty stance folder
    assert "no stance examples" in capsys.readouterr().out


def test_held_out_pitfalls_never_reach_training(bank: QuestionBank) -> None:
    stance = load_stance()
    keys = [f"{q.id}/{p.id}" for q in bank for p in q.pitfalls]
    kept, held = holdout_split(keys, 0.2, seed=3)
    assert len(held) == round(len(keys) * 0.2) and not set(kept) & set(held)
    training = build_pairs(bank, stance, kept, seed=3)
    held_sentences = {
        text
        for f in stance.values()
        for p in f.pitfalls
        if f"{f.question}/{p.id}" in held
        for label in ("asserts", "rejects", "neither")
        for lang in ("ru", "en")
        for text in p.examples(label).get(lang)
    }
    assert {pair.pitfall for pair in training} == set(kept)
    assert not {pair.text for pair in training} & held_sentences


def _write_stance(folder: Path, bank: QuestionBank, question_id: str) -> None:
    question = bank.questions[question_id]
    stance = StanceFile(
        question=question_id,
        pitfalls=tuple(
            PitfallStance(
                id=p.id,
                asserts=_examples(4, f"{p.id} asserts"),
                rejects=_examples(4, f"{p.id} rejects"),
                neither=_examples(2, f"{p.id} neither"),
            )
            for p in question.pitfalls
        ),
    )
    (folder / f"{question_id}.yaml").write_text(
        yaml.safe_dump(stance.model_dump(exclude={"pitfalls": {"__all__": {"plain", "reported"}}}))
    )


def test_corrections_are_merged_into_their_pitfall_and_train_as_rejections(
    bank: QuestionBank, tmp_path: Path
) -> None:
    _write_stance(tmp_path, bank, "dropout")
    (tmp_path / CORRECTIONS_DIR).mkdir()
    corrections = {
        "question": "dropout",
        "pitfalls": [
            {
                "id": "scale-at-inference",
                "plain": {"en": ["Survivors are scaled by 1/(1-p) in training."], "ru": ["Делят."]},
                "reported": {"en": ["A common misreading is that eval scales by 1-p."]},
            }
        ],
    }
    (tmp_path / CORRECTIONS_DIR / "dropout.yaml").write_text(yaml.safe_dump(corrections))
    assert not any(p.plain.en for p in load_stance(tmp_path)["dropout"].pitfalls)  # not asked
    stance = load_stance(tmp_path, corrections=True)
    merged = {p.id: p for p in stance["dropout"].pitfalls}
    assert merged["scale-at-inference"].plain.ru == ("Делят.",)
    assert merged["scale-at-inference"].asserts.en[0] == "scale-at-inference asserts 0"
    assert all(not p.plain.en for i, p in merged.items() if i != "scale-at-inference")
    counts = example_count(stance.values())
    assert counts["plain"] == 2 and counts["reported"] == 1

    pairs = build_pairs(bank, stance, ["dropout/scale-at-inference"])
    added = {
        (p.text, p.label, p.source, p.lang) for p in pairs if p.source in ("plain", "reported")
    }
    assert added == {
        ("Survivors are scaled by 1/(1-p) in training.", REJECTS, "plain", "en"),
        ("Делят.", REJECTS, "plain", "ru"),
        ("A common misreading is that eval scales by 1-p.", REJECTS, "reported", "en"),
    }
    # Without the corrections the other pairs are the same ones (the shuffle aside).
    (tmp_path / CORRECTIONS_DIR / "dropout.yaml").unlink()
    without = build_pairs(
        bank, load_stance(tmp_path, corrections=True), ["dropout/scale-at-inference"]
    )
    assert Counter(p for p in pairs if p.source not in ("plain", "reported")) == Counter(without)


def test_a_corrections_file_for_an_unknown_pitfall_or_question_is_refused(
    bank: QuestionBank, tmp_path: Path
) -> None:
    _write_stance(tmp_path, bank, "dropout")
    (tmp_path / CORRECTIONS_DIR).mkdir()
    wrong = tmp_path / CORRECTIONS_DIR / "dropout.yaml"
    wrong.write_text(yaml.safe_dump({"question": "dropout", "pitfalls": [{"id": "no-such"}]}))
    with pytest.raises(StanceError, match="no-such"):
        load_stance(tmp_path, corrections=True)
    wrong.unlink()
    (tmp_path / CORRECTIONS_DIR / "zero-grad.yaml").write_text(
        yaml.safe_dump({"question": "zero-grad", "pitfalls": []})
    )
    with pytest.raises(StanceError, match="no stance file"):
        load_stance(tmp_path, corrections=True)


def test_pairs_carry_written_labels_corrections_key_points_and_hard_negatives(
    bank: QuestionBank,
) -> None:
    stance = load_stance()
    question = bank.questions["train-vs-eval"]
    pitfall = question.pitfall("eval-disables-grad")
    keys = [f"train-vs-eval/{p.id}" for p in question.pitfalls] + [
        "zero-grad/zero-grad-resets-weights"
    ]
    pairs = [
        p
        for p in build_pairs(bank, stance, keys)
        if p.pitfall == "train-vs-eval/eval-disables-grad"
    ]
    en = [p for p in pairs if p.lang == "en"]
    assert {p.claim for p in en} == {pitfall.claim.en}
    written = stance["train-vs-eval"].pitfalls[0]
    assert {p.text for p in en if p.label == ASSERTS} == set(written.asserts.en)
    assert (pitfall.correction.en, REJECTS) in {(p.text, p.label) for p in en}
    assert {k.en for k in question.key_points} <= {p.text for p in en if p.label == NEITHER}
    # Hard negatives: another pitfall's assertions, labelled neither for this claim.
    others = {
        t
        for f in stance.values()
        for p in f.pitfalls
        if p.id != "eval-disables-grad"
        for t in p.asserts.en
    }
    negatives = [p for p in en if p.source == "other-pitfall"]
    assert negatives and all(p.label == NEITHER and p.text in others for p in negatives)


def test_real_answer_sentences_become_pairs_only_for_kept_pitfalls(
    bank: QuestionBank, tmp_path: Path
) -> None:
    rows = [
        {
            "question": "zero-grad",
            "pitfall": "zero-grad-resets-weights",
            "lang": "en",
            "label": "asserts",
            "text": "zero_grad wipes the weights back to zero",
            "source": "eval",
        },
        {
            "question": "zero-grad",
            "pitfall": "zero-grad-resets-weights",
            "lang": "ru",
            "label": "neither",
            "text": "backward копит градиенты",
            "source": "heldout",
        },
        {
            "question": "zero-grad",
            "pitfall": "zero-grad-resets-weights",
            "lang": "en",
            "label": "rejects",
            "text": "zero_grad does not touch the weights, only the .grad buffers",
            "source": "blind12",
        },
        {
            "question": "train-vs-eval",
            "pitfall": "eval-disables-grad",
            "lang": "en",
            "label": "neither",
            "text": "eval switches dropout off",
            "source": "eval",
        },
    ]
    (tmp_path / ANSWERS_FILE).write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8"
    )
    loaded = load_answer_sentences(tmp_path)
    assert [r.text for r in loaded] == [r["text"] for r in rows]
    pairs = answer_pairs(bank, loaded, ["zero-grad/zero-grad-resets-weights"])
    claim = bank.questions["zero-grad"].pitfall("zero-grad-resets-weights").claim
    # An assertion or a rejection counts ANSWER_REPEAT times, a neutral sentence once; the
    # held-out pitfall's sentence is left out.
    assert sorted((p.claim, p.text, p.label) for p in pairs) == sorted(
        [(claim.en, rows[0]["text"], ASSERTS)] * ANSWER_REPEAT
        + [(claim.ru, rows[1]["text"], NEITHER)]
        + [(claim.en, rows[2]["text"], REJECTS)] * ANSWER_REPEAT
    )
    assert {p.source for p in pairs} == {"answer"}
    (tmp_path / ANSWERS_FILE).write_text('{"question": "zero-grad"}\n', "utf-8")
    with pytest.raises(StanceError, match=r"answers\.jsonl:1"):
        load_answer_sentences(tmp_path)
    assert load_answer_sentences(tmp_path / "missing") == []


def test_the_committed_answer_sentences_name_bank_pitfalls(bank: QuestionBank) -> None:
    rows = load_answer_sentences()
    assert {r.label for r in rows} == {"asserts", "rejects", "neither"}
    assert {r.source for r in rows} <= set(ANSWER_SOURCES)
    # Never the sets the thresholds are chosen on, nor a set still to be read.
    from bot.evaluation.datasets import UNREAD
    from bot.evaluation.stance_thresholds import THRESHOLD_SETS

    assert UNREAD and not {*THRESHOLD_SETS, *UNREAD} & set(ANSWER_SOURCES)
    assert not UNREAD & set(THRESHOLD_SETS)
    for r in rows:
        bank.questions[r.question].pitfall(r.pitfall)  # raises where the bank lacks it


@pytest.fixture(scope="module")
def tiny_artefact(bank: QuestionBank, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few training steps on two pitfalls, one layer of the small model: the real pipeline
    end to end, on tiny data."""
    out = tmp_path_factory.mktemp("stance")
    pairs = build_pairs(
        bank,
        load_stance(),
        ["train-vs-eval/eval-disables-grad", "zero-grad/zero-grad-resets-weights"],
    )
    config = StanceConfig(base="bundled", layers=1, lora_rank=2, lora_alpha=4)
    predict, report = train(
        pairs[:48], config, TrainOptions(epochs=1, batch_size=8, max_steps=3), out, progress=False
    )
    assert report.steps == 3 and np.isfinite(report.final_loss)
    probabilities = predict([(pairs[0].claim, pairs[0].text)])
    assert probabilities.shape == (1, 3) and abs(float(probabilities.sum()) - 1) < 1e-4
    return out


def test_a_trained_artefact_loads_and_reads_pairs(tiny_artefact: Path) -> None:
    model = StanceModel(tiny_artefact)
    assert model.config.layers == 1 and set(model.config.sha256) == {
        ADAPTER_FILE,
        "head.safetensors",
    }
    pairs = [
        ("model.eval() turns off gradient computation.", "After eval() no graph is built."),
        ("model.eval() turns off gradient computation.", "eval() does not touch autograd at all."),
        ("zero_grad() resets the weights.", "Adam keeps two moment estimates per parameter."),
    ]
    probabilities = model.probabilities(pairs)
    assert probabilities.shape == (3, 3)
    assert np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-4)
    # Order-independent: each pair's row is its own, however the batch is sorted.
    assert np.allclose(model.probabilities(pairs[::-1])[::-1], probabilities, atol=1e-5)
    # bf16 (where the encoder runs in bf16 on a CPU): the same reading, within rounding.
    bf16 = StanceModel(tiny_artefact, precision="bf16")
    assert bf16.precision == "bf16"
    assert np.allclose(bf16.probabilities(pairs), probabilities, atol=0.02)
    assert StanceModel(tiny_artefact, device="cpu", precision="fp32").precision == "fp32"


def test_bf16_pair_models_hold_their_linear_weights_in_bf16_and_read_as_autocast_does(
    tiny_artefact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cast once (and prepacked where the CPU has AMX) rather than by autocast on every call:
    the products are autocast's own, so the reading is the same."""
    import torch

    from bot.scoring import packed_linear
    from bot.scoring.packed_linear import PackedLinear

    prepared = StanceModel(tiny_artefact, precision="bf16")
    layers = [m for m in prepared._base.modules() if isinstance(m, torch.nn.Linear | PackedLinear)]
    assert layers and all(
        (m.packed if isinstance(m, PackedLinear) else m.weight).dtype == torch.bfloat16
        for m in layers
    )
    assert prepared.packed == packed_linear.supported()
    monkeypatch.setattr(packed_linear, "prepare_bf16_linear_layers", lambda model, pack=None: False)
    autocast = StanceModel(tiny_artefact, precision="bf16")
    assert all(
        m.weight.dtype == torch.float32
        for m in autocast._base.modules()
        if isinstance(m, torch.nn.Linear)
    )
    pairs = [
        ("model.eval() turns off gradient computation.", "After eval() no graph is built."),
        ("zero_grad() resets the weights.", "Adam keeps two moment estimates per parameter."),
    ]
    assert np.array_equal(prepared.probabilities(pairs), autocast.probabilities(pairs))


def test_an_artefact_that_does_not_match_its_checksum_is_refused(
    tiny_artefact: Path, tmp_path: Path
) -> None:
    import shutil

    copy = tmp_path / "weights"
    shutil.copytree(tiny_artefact, copy)
    with (copy / ADAPTER_FILE).open("ab") as f:
        f.write(b"\0")
    with pytest.raises(StanceModelError, match="checksum"):
        StanceModel(copy)


def test_the_stance_model_is_used_only_with_the_model_it_was_trained_from(
    tiny_artefact: Path, tmp_path: Path
) -> None:
    assert load_stance_model("multilingual-e5-small", tiny_artefact) is None  # base: bundled
    assert load_stance_model("bundled", tiny_artefact) is not None
    assert load_stance_model("bundled", tmp_path) is None  # no artefact


def test_classification_figures_per_class_and_confusion() -> None:
    figures = classification(np.array([0, 0, 1, 2, 2, 2]), np.array([0, 1, 1, 2, 2, 0]))
    assert figures["confusion"] == [[1, 1, 0], [0, 1, 0], [1, 0, 2]]
    assert figures["per_class"]["asserts"] == {
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "support": 2,
    }
    assert figures["accuracy"] == 0.667


class ScriptedStance:
    """A stance model whose P(asserts) is scripted by words of the sentence."""

    flag_at = 0.6
    head_floor = -100.0  # reads every pitfall's best candidate sentence
    veto = 0.0
    flags = None  # P(asserts) at flag_at decides (tests/unit/test_flag_model.py: with one)

    def __init__(self, script: dict[str, float]):
        self.script = script
        self.seen: list[tuple[str, str]] = []

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.seen += list(pairs)
        rows = []
        for _, sentence in pairs:
            p = next((v for k, v in self.script.items() if k in sentence), 0.05)
            rows.append([p, (1 - p) / 2, (1 - p) / 2])
        return np.array(rows, dtype=np.float32).reshape(-1, 3)


def test_the_pair_model_reads_the_heads_best_sentences_before_its_gates(
    bank: QuestionBank,
) -> None:
    question = bank.questions["train-vs-eval"]
    sentences = ["alpha sentence", "beta sentence", "gamma sentence"]
    raw = np.array([[0.9, -1.0], [0.5, 0.1], [0.3, 0.0]])
    said = np.array([[0.9, -np.inf], [-np.inf, 0.1], [0.3, -np.inf]])  # -inf: a gate says no
    found = candidates(question, sentences, raw, said, floor=0.2, per_pitfall=2)
    # Pitfall 0: its two best by raw logit; pitfall 1: none reaches the floor.
    assert [(c.sentence, c.pitfall) for c in found] == [(0, 0), (1, 0)]
    model = ScriptedStance({})
    sims = np.zeros((3, 2))
    # The head's own flag (gated logit 0.9 at flag_at 0.8) stands, whatever the pair model says.
    kept = verdicts(model, question, sentences, found, np.array([0.1, 0.2]), 0.8, sims).said
    assert [(h.id, h.evidence) for h in kept] == [(question.pitfalls[0].id, "alpha sentence")]
    # Under a head flag_at of 1.2, said only when the pair model is sure of one candidate ...
    assert not verdicts(model, question, sentences, found, np.array([0.5, 0.55]), 1.2, sims).said
    # ... and a sentence the head's gates refuse can be the one (quoted, with its probability).
    hits = verdicts(model, question, sentences, found, np.array([0.3, 0.75]), 1.2, sims).said
    assert [(h.id, h.evidence, h.probability) for h in hits] == [
        (question.pitfalls[0].id, "beta sentence", 0.75)
    ]


def test_the_pair_model_vetoes_a_head_flag_it_reads_as_not_asserted(bank: QuestionBank) -> None:
    question = bank.questions["train-vs-eval"]
    sentences = ["alpha sentence", "beta sentence"]
    raw = np.array([[0.9, -1.0], [0.5, -1.0]])
    said = np.array([[0.9, -np.inf], [-np.inf, -np.inf]])
    found = candidates(question, sentences, raw, said, floor=0.2, per_pitfall=2)
    model = ScriptedStance({})
    model.veto = 0.15
    sims = np.zeros((2, 2))
    # The head says pitfall 0 on "alpha"; the pair model reads it at 0.1: dropped ...
    assert not verdicts(model, question, sentences, found, np.array([0.1, 0.2]), 0.8, sims).said
    # ... and at 0.3, above the veto though below flag_at, the head's flag stands.
    kept = verdicts(model, question, sentences, found, np.array([0.3, 0.2]), 0.8, sims).said
    assert [(h.id, h.evidence, h.probability) for h in kept] == [
        (question.pitfalls[0].id, "alpha sentence", 0.3)
    ]


def test_a_head_flag_the_stance_model_vetoed_stays_dropped_and_one_on_a_clause_stays() -> None:
    from bot.scoring.composition import with_stance
    from bot.scoring.pitfalls import PitfallHit

    sentence, clause = "X holds, but Y does too.", "but Y does too."
    head = [PitfallHit("x", 0.8, sentence), PitfallHit("y", 0.7, clause)]
    hint = [PitfallHit("z", 0.5, "Z maybe.")]
    # The stance model read the sentence and did not say "x" (a veto): the head's flag on it is
    # not brought back; the clause it never read keeps the head's flag.
    said, checks = with_stance(head, hint, [], read=[sentence, "Z maybe."])
    assert [(h.id, h.evidence) for h in said] == [("y", clause)]
    assert checks == hint
    # Its own flag wins over the head's for the same pitfall, with its probability.
    own = PitfallHit("x", 0.8, sentence, probability=0.9)
    said, _ = with_stance(head, hint, [own], read=[sentence])
    assert [(h.id, h.probability) for h in said] == [("x", 0.9), ("y", None)]


def test_a_head_flag_on_a_clause_falls_with_its_sentence_vetoed_for_that_pitfall() -> None:
    from bot.scoring.composition import with_stance
    from bot.scoring.pitfalls import PitfallHit

    sentence = "Some say X holds, but it does not."
    clause = PitfallHit("x", 0.8, "Some say X holds")
    # The sentence holding the clause was read below the veto for "x": the clause, which says
    # no more than its sentence, loses the head's flag.
    said, _ = with_stance([clause], [], [], read=[sentence], vetoed={(sentence, "x")})
    assert said == []
    # Vetoed for another pitfall, or not read for this one: the head's flag stays.
    said, _ = with_stance([clause], [], [], read=[sentence], vetoed={(sentence, "y")})
    assert said == [clause]
    said, _ = with_stance([clause], [], [], read=[sentence])
    assert said == [clause]


def test_a_hint_falls_where_the_stance_model_vetoed_its_sentence_for_that_pitfall() -> None:
    from bot.scoring.composition import with_stance
    from bot.scoring.pitfalls import PitfallHit

    sentence = "model.eval() does not turn off gradients: torch.no_grad() does."
    hint = PitfallHit("eval-disables-grad", 0.5, sentence)
    clause = PitfallHit("eval-disables-grad", 0.5, "model.eval() does not turn off gradients")
    # Read below the veto for that pitfall: neither the sentence nor a clause of it is a
    # misconception worth checking.
    vetoed = {(sentence, "eval-disables-grad")}
    for shown in (hint, clause):
        _, checks = with_stance([], [shown], [], read=[sentence], vetoed=vetoed)
        assert checks == []
    # Vetoed for another pitfall, or read above the veto: the hint stays.
    _, checks = with_stance([], [hint], [], read=[sentence], vetoed={(sentence, "other")})
    assert checks == [hint]
    _, checks = with_stance([], [hint], [], read=[sentence])
    assert checks == [hint]


def test_the_graders_head_flag_on_a_clause_falls_to_the_veto_on_its_sentence(
    grader: Grader, bank: QuestionBank
) -> None:
    question = bank.questions["train-vs-eval"]
    answer = "It is tempting to say that model.eval() turns off gradients, but it does not: you need torch.no_grad for that."
    head_only = Grader(grader.encoder, grader._calibration, grader.options)
    heads = {h.id: h for h in head_only.grade(question, answer, "en").pitfalls}
    # The head says it alone, on a clause (not the sentence, which the stance model reads).
    assert "eval-disables-grad" in heads and heads["eval-disables-grad"].evidence != answer
    vetoing = ScriptedStance({})  # P(asserts) 0.05 for every sentence
    vetoing.veto = 0.1
    result = Grader(grader.encoder, grader._calibration, grader.options, vetoing).grade(
        question, answer, "en"
    )
    assert "eval-disables-grad" not in {h.id for h in result.pitfalls}


def test_the_graders_head_flag_falls_to_the_stance_models_veto(
    grader: Grader, bank: QuestionBank
) -> None:
    question = bank.questions["train-vs-eval"]
    answer = (
        "model.train() enables dropout and batch statistics in BatchNorm. "
        "model.eval() turns off gradient computation."
    )
    head_only = Grader(grader.encoder, grader._calibration, grader.options)
    heads = head_only.grade(question, answer, "en").pitfalls
    assert "eval-disables-grad" in {h.id for h in heads}  # the head says it alone
    vetoing = ScriptedStance({})  # P(asserts) 0.05 for every sentence
    vetoing.veto = 0.1
    result = Grader(grader.encoder, grader._calibration, grader.options, vetoing).grade(
        question, answer, "en"
    )
    assert "eval-disables-grad" not in {h.id for h in result.pitfalls}


def test_the_grader_lets_the_stance_model_decide_and_quotes_the_sentence(
    grader: Grader, bank: QuestionBank
) -> None:
    assert grader.head is not None
    question = bank.questions["train-vs-eval"]
    model = ScriptedStance({"tracking": 0.92})
    with_stance = Grader(grader.encoder, grader._calibration, grader.options, model)
    answer = (
        "model.train() enables dropout and batch statistics in BatchNorm. "
        "After model.eval() autograd stops tracking operations, so validation is cheaper."
    )
    result = with_stance.grade(question, answer, "en")
    said = {h.id: h for h in result.pitfalls}
    assert "eval-disables-grad" in said
    hit = said["eval-disables-grad"]
    assert hit.evidence == (
        "After model.eval() autograd stops tracking operations, so validation is cheaper."
    )
    assert hit.probability == 0.92
    flag = next(f for f in result.to_json()["pitfalls"] if f["id"] == "eval-disables-grad")
    assert flag["probability"] == 0.92 and flag["evidence"] == hit.evidence
    # The model read sentences with the claim in their language, never the whole answer.
    claims = {p.claim.en for p in question.pitfalls}
    assert model.seen and all(s != answer and c in claims for c, s in model.seen)
    # The same answer when the pair model finds no assertion: the head alone decides.
    head_only = Grader(grader.encoder, grader._calibration, grader.options)
    calm = Grader(grader.encoder, grader._calibration, grader.options, ScriptedStance({}))
    assert {h.id for h in calm.grade(question, answer, "en").pitfalls} == {
        h.id for h in head_only.grade(question, answer, "en").pitfalls
    }


@pytest.mark.parametrize(
    # dropout asked, batch-norm's answer given: the rule alone lets it pass (it covers enough of
    # dropout's points); the relevance model tells it (tests/unit/test_relevance_model.py).
    ("asked", "answered"),
    [("hooks", "nan-loss-debug"), ("batch-norm", "dropout")],
)
def test_an_answer_to_another_question_is_capped_and_named(
    grader: Grader, bank: QuestionBank, asked: str, answered: str
) -> None:
    result = grader.grade(bank.questions[asked], bank.questions[answered].answer.en, "en")
    assert result.answers_question == answered, result.to_json()
    assert result.score <= 1.5 and result.verdict == "off-topic"
    assert result.to_json()["answers_question"] == answered


@pytest.mark.parametrize(
    ("question_id", "answer"),
    [
        (
            "zero-grad",
            "zero_grad() clears the .grad of the parameters, since backward adds to them.",
        ),
        (
            "gradient-accumulation",
            "Sum gradients over k micro-batches, dividing the loss by k, then step.",
        ),
        ("view-vs-reshape", "view needs a contiguous tensor; reshape copies when it has to."),
    ],
)
def test_a_short_on_topic_answer_is_not_taken_for_another_question(
    grader: Grader, bank: QuestionBank, question_id: str, answer: str
) -> None:
    result = grader.grade(bank.questions[question_id], answer, "en")
    assert result.answers_question is None, result.to_json()


def test_stance_thresholds_take_the_most_recall_within_the_false_flag_target() -> None:
    from bot.evaluation.datasets import Sample
    from bot.evaluation.stance_thresholds import choose, flagged, rates

    def sample(kind: str, pitfall: str | None = None, rejects: str | None = None) -> Sample:
        return Sample("q", "text", 5.0, "en", "q", kind=kind, pitfall=pitfall, rejects=rejects)

    samples = [
        sample("pitfall", pitfall="a"),
        sample("pitfall", pitfall="b"),
        sample("strong"),
        sample("rejects", rejects="a"),
        sample("strong"),
    ]
    # (pitfall, the head's raw logit, its gated logit, P(asserts)) of each candidate sentence.
    ninf = -np.inf
    read = [
        [("a", 1.5, 1.5, 0.1)],  # the head says it (flag_at 1.2); the pair model reads 0.1
        [("b", 0.5, ninf, 0.9), ("b", 0.6, ninf, 0.3), ("a", 0.0, 0.0, 0.2)],  # a gated one
        [("a", 0.3, 0.3, 0.95)],  # a clean answer: a flag here is false
        [("a", -0.5, -0.5, 0.99)],  # a rejecting answer
        [("a", 1.4, 1.4, 0.05)],  # the head flags a clean answer the pair model reads at 0.05
    ]
    assert rates(samples, flagged(read, 1.2, 2.0, 2.0), 0.5)["recall"] == 0.5  # head alone
    assert rates(samples, flagged(read, 1.2, 2.0, 2.0), 0.5)["false_flags"] == 0.333
    floor, at, veto = choose(samples, read, 1.2)
    # The floor above the clean answer's 0.3, within b's 0.5 and 0.9; the veto drops the head's
    # flag at 0.05 and keeps the one at 0.1.
    assert (floor, at, veto) == (0.4, 0.5, 0.1)
    assert rates(samples, flagged(read, 1.2, floor, at, veto), 0.5) == {
        "recall": 1.0,
        "false_flags": 0.0,
        "rejecting_flagged": 0.0,
        "precision": 1.0,
    }


def test_stance_thresholds_leave_rejecting_answers_unflagged_within_their_own_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rejecting answer is one clean answer of many to the false-flag target, so that target
    alone lets it be flagged; its own target does not."""
    from bot.evaluation import stance_thresholds
    from bot.evaluation.datasets import Sample
    from bot.evaluation.stance_thresholds import choose, flagged, rates

    def sample(kind: str, pitfall: str | None = None, rejects: str | None = None) -> Sample:
        return Sample("q", "text", 5.0, "en", "q", kind=kind, pitfall=pitfall, rejects=rejects)

    ninf = -np.inf
    samples = [sample("pitfall", pitfall="a"), sample("pitfall", pitfall="b")]
    read: list[list[tuple[str, float, float, float]]] = [
        [("a", 0.5, ninf, 0.9)],
        [("b", 0.5, ninf, 0.7)],
    ]
    samples.append(sample("rejects", rejects="a"))
    read.append([("a", 0.5, ninf, 0.8)])  # reads between the two assertions
    samples += [sample("strong") for _ in range(40)]
    read += [[("a", -1.0, ninf, 0.1)] for _ in range(40)]

    monkeypatch.setattr(stance_thresholds, "REJECT_TARGET", 1.0)
    floor, at, veto = choose(samples, read, 1.2)
    loose = rates(samples, flagged(read, 1.2, floor, at, veto), 0.5)
    assert loose["recall"] == 1.0 and loose["rejecting_flagged"] == 1.0
    assert loose["false_flags"] <= stance_thresholds.FLAG_TARGET

    monkeypatch.setattr(stance_thresholds, "REJECT_TARGET", 0.03)
    floor, at, veto = choose(samples, read, 1.2)
    assert 0.8 < at <= 0.9
    assert rates(samples, flagged(read, 1.2, floor, at, veto), 0.5) == {
        "recall": 0.5,
        "false_flags": 0.0,
        "rejecting_flagged": 0.0,
        "precision": 1.0,
    }


def test_another_question_is_told_only_once_the_whole_bank_is_there(
    grader: Grader, bank: QuestionBank
) -> None:
    """A cold start computes the bank's vectors between grades: until they are all there, no
    answer is compared with the bank (and none is capped for it)."""
    fresh = Grader(grader.encoder, grader._calibration, grader.options)
    answer = bank.questions["nan-loss-debug"].answer.en
    assert fresh.grade(bank.questions["hooks"], answer, "en").answers_question is None
    fresh.warm(list(bank))
    assert fresh.grade(bank.questions["hooks"], answer, "en").answers_question == "nan-loss-debug"


def test_the_model_card_gives_the_threshold_sets_pooled_beside_each_set() -> None:
    from bot.evaluation.stance_training import render_card

    def rates(recall: float) -> dict[str, float]:
        return {"recall": recall, "false_flags": 0.03, "rejecting_flagged": 0.02, "precision": 0.9}

    thresholds = {
        "date": "2026-12-06",
        "command": "python -m bot train stance-thresholds",
        "chosen_on": "content/blind and content/blind8",
        "answers": 700,
        "head_floor": -2.0,
        "flag_at": 0.88,
        "veto": 0.2,
        "pooled": rates(0.7),
        "blind": {"head_and_stance": rates(0.6), "head_alone": rates(0.3)},
    }
    card = render_card({"thresholds": thresholds}).splitlines()
    assert "| the threshold sets together | with stance | 0.7 | 0.03 | 0.02 | 0.9 |" in card
    assert not any(line.startswith("| the threshold sets together | head alone") for line in card)
    assert "| blind | with stance | 0.6 | 0.03 | 0.02 | 0.9 |" in card
    assert "| blind | head alone | 0.3 | 0.03 | 0.02 | 0.9 |" in card


def test_the_stance_models_own_hint_comes_first_and_a_head_hint_on_its_pitfall_gives_way() -> None:
    from bot.scoring.composition import with_stance
    from bot.scoring.pitfalls import PitfallHit

    sure = PitfallHit("x", 0.4, "X holds for sure.", probability=0.95)
    head_x = PitfallHit("x", 0.6, "X, maybe.")
    head_y = PitfallHit("y", 0.6, "Y, maybe.")
    read = [sure.evidence, head_x.evidence, head_y.evidence]
    _, checks = with_stance([], [head_x, head_y], [], read=read, doubted=[sure])
    assert checks == [sure, head_y]
    # Not where the pitfall is said, nor on a sentence accused of another one.
    said_x = PitfallHit("x", 0.8, "X indeed.", probability=0.97)
    said, checks = with_stance([], [], [said_x], read=read, doubted=[sure])
    assert (said, checks) == ([said_x], [])
    accused = PitfallHit("z", 0.8, sure.evidence, probability=0.97)
    _, checks = with_stance([], [], [accused], read=read, doubted=[sure])
    assert checks == []

"""The grader's switches, one per part of the method (docs/grading.md)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GraderOptions:
    """Switches for each part of the method; `eval --ablation` turns them off one at a time."""

    calibration: bool = True  # per-language-pair rescaling of cosines
    terms: bool = True  # identifier bonus for key points
    clauses: bool = True  # contrastive clauses as extra units
    polarity: bool = True  # negation / rejection check before flagging a pitfall
    # The share of key-point coverage in the score, the rest overall similarity (1.0: key
    # points only; 0.0: model answer only).
    coverage_weight: float = 0.7
    off_topic_gate: bool = True
    generic_cap: bool = True
    admits_cap: bool = True  # ADMITS_CAP
    # Encode the whole answer as well as its sentences (about 2x the model work, +0.02 Spearman);
    # off: its vector is the length-weighted mean of the sentences' (docs/grading.md).
    encode_whole: bool = True
    # Encode each answer once and pool its sentences' and clauses' vectors from its tokens,
    # instead of encoding every unit as its own text (docs/grading.md, "Speed").
    one_pass: bool = False
    # The fitted pitfall head of the model (bot/scoring/heads/), where one exists; off: the fixed
    # rule (threshold, polarity, closer-to-correction).
    head: bool = True
    # The stance model (bot/scoring/stance/), where one was trained on this embedding model:
    # it decides which misconceptions are stated instead of the head.
    stance: bool = True
    # The flag model fitted beside it (bot/scoring/stance/flag_model.py), where one was fitted;
    # off: the stance model's P(asserts) at its threshold says a misconception is said.
    stance_flags: bool = True
    # Tell an answer to another bank question (Neighbour.answered) and cap it.
    neighbour: bool = True
    # The relevance model (bot/scoring/relevance_net/), where one was trained on this embedding
    # model: with the vector rule, tells an answer to another question (relevance_net/judge.py).
    relevance: bool = True
    # The fitted score (bot/scoring/score_model.py), where one was fitted for this embedding
    # model and both models above are present; off: the hand-set formula scores.
    fitted_score: bool = True

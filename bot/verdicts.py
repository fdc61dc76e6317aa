"""A grade's one-word verdict, as stored (answers.verdict, round_answers.verdict) and shown
(bot/i18n_feedback.py, `verdict.<value>`). Here, outside the layers, because scoring gives it and
storage keeps it, and neither imports the other."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    # By score (bot/scoring/grade_result.py, verdict_for)
    excellent = "excellent"
    good = "good"
    partial = "partial"
    weak = "weak"
    no_answer = "no-answer"
    off_topic = "off-topic"  # far from the question, or an answer to another bank question
    retired = "retired"  # the question left the bank before its answer was graded
    # A quiz vote (group quiz rounds)
    correct = "correct"
    wrong = "wrong"

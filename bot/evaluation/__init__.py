"""Measures the grader against human grades: `python -m bot eval`."""

"""Answer grading: embedding model, grader, and the worker that keeps it off the event loop."""

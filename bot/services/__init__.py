"""Framework-free product logic: interviews, question choice, what to send next."""

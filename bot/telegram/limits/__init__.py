"""Telegram's send limits, in one place: the global send bucket (send_bucket.py), each group's
per-minute budget (groups.py), and both shared by every replica through Redis (shared.py)."""

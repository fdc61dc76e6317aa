"""Persistence: SQLAlchemy models, engine/session factory, repositories, migrations."""
